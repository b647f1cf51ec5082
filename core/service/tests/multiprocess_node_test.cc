// Three `kvchaos node` processes on one real redis-server (coordination and meta index), all on
// loopback. The first leader runs with the test-only knob kvcm.testing.serve_without_lease_check
// (admitted by KVCHAOS_TESTING=1), i.e. as a zombie that keeps serving after it loses leadership:
// it is SIGSTOPped past its lease, a new leader writes, the zombie is resumed and its writes must
// be rejected by the indexer's fencing-token check (StaleFencingToken) with the new leader's data
// intact. Then Redis pauses for less than a lease (no failover), the next leader (a normal node)
// is paused and resumed (its own lease check refuses writes: NotLeader), and the leader after that
// is kill -9'd. Throughout: one node serves at a time, and a new leader takes over within
// lease_ms + 2 × loop_interval_ms (plus a polling allowance on a loaded machine).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/client/http_meta_client.h"
#include "core/common/runtime.h"
#include "testing/redis_server.h"
#include "testing/temp_dir.h"

namespace kvchaos::service {
namespace {

using nlohmann::json;
constexpr int64_t kLeaseMs = 1500;
constexpr int64_t kLoopMs = 50;
// Polling period plus scheduling delays of a shared 2-core machine.
constexpr int64_t kAllowanceMs = 1000;

struct NodeProcess {
  pid_t pid = -1;
  int admin_port = 0;
  int meta_port = 0;
  std::string id;
  std::string admin() const { return "127.0.0.1:" + std::to_string(admin_port); }
};

class Cluster {
 public:
  ~Cluster() {
    for (auto& n : nodes) {
      if (n.pid <= 0) continue;
      ::kill(n.pid, SIGCONT);
      ::kill(n.pid, SIGKILL);
      ::waitpid(n.pid, nullptr, 0);
    }
  }
  // `testing_env`: the child gets KVCHAOS_TESTING=1, which admits kvcm.testing.* keys.
  NodeProcess Launch(const std::string& config, bool testing_env = false) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    if (pid == 0) {
      if (testing_env) ::setenv("KVCHAOS_TESTING", "1", 1);
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      ::execl(KVCHAOS_CLI_PATH, "kvchaos", "node", "--config", config.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(fds[1]);
    NodeProcess n;
    n.pid = pid;
    nodes.push_back(n);
    FILE* out = ::fdopen(fds[0], "r");
    char line[4096];
    if (std::fgets(line, sizeof line, out) != nullptr) {
      json up = json::parse(line, nullptr, false);
      if (up.is_object() && up.value("event", "") == "up") {
        n.admin_port = up["admin_http_port"];
        n.meta_port = up["meta_http_port"];
        n.id = up["node_id"];
      }
    }
    std::fclose(out);  // the node's later lines go to a closed pipe; it writes only at stop
    nodes.back() = n;
    return n;
  }
  std::vector<NodeProcess> nodes;
};

// Node ids that answer is_leader right now (stopped nodes do not answer).
std::vector<std::string> Leaders(const std::vector<NodeProcess>& nodes, const std::vector<pid_t>& skip) {
  std::vector<std::string> out;
  for (const auto& n : nodes) {
    if (std::find(skip.begin(), skip.end(), n.pid) != skip.end()) continue;
    auto info = client::PostJson(n.admin(), "GetManagerClusterInfo", json::object(), 300);
    if (info.ok() && info->value("is_leader", false)) out.push_back(n.id);
  }
  return out;
}

// Waits for exactly one leader among the nodes not in `skip`; returns its id and the wait in ms.
std::pair<std::string, int64_t> WaitNewLeader(const std::vector<NodeProcess>& nodes, const std::vector<pid_t>& skip,
                                              MonoTime since, int64_t limit_ms) {
  Runtime& rt = Runtime::Real();
  while (ToMillis(rt.Now() - since) < limit_ms) {
    auto leaders = Leaders(nodes, skip);
    EXPECT_LE(leaders.size(), 1u) << "two nodes serve at once";
    if (leaders.size() == 1) return {leaders[0], ToMillis(rt.Now() - since)};
    rt.SleepFor(std::chrono::milliseconds(10));
  }
  return {"", limit_ms};
}

std::string WriteConfig(const kvchaos::testing::TempDir& dir, const std::string& name, const std::string& redis_uri,
                        bool zombie) {
  std::string path = (dir.path() / name).string();
  std::ofstream f(path);
  f << "kvcm:\n  coordination: {uri: \"" << redis_uri << "/?timeout_ms=200&retry_count=0\"}\n"
    << "  leader_elector: {lease_ms: " << kLeaseMs << ", loop_interval_ms: " << kLoopMs << "}\n"
    << "  service: {meta_http_port: 0, admin_http_port: 0, heartbeat_interval_ms: 200, heartbeat_ttl_ms: 1000}\n"
    << "  meta: {indexer_uri: \"" << redis_uri << "/?timeout_ms=200&retry_count=0\"}\n";
  if (zombie) f << "  testing: {serve_without_lease_check: true}\n";
  return path;
}

TEST(MultiprocessNodeTest, FailoverPauseTokenRejectionAndRedisOutage) {
  auto redis = kvchaos::testing::RedisServer::Start();
  if (!redis) GTEST_SKIP() << kvchaos::testing::RedisServer::SkipReason();
  kvchaos::testing::TempDir dir("kvchaos-mp-node");
  const std::string config = WriteConfig(dir, "node.yaml", redis->uri(), false);
  const std::string zombie_config = WriteConfig(dir, "zombie.yaml", redis->uri(), true);
  Cluster cluster;
  Runtime& rt = Runtime::Real();
  auto& nodes = cluster.nodes;
  // The zombie starts alone, so it is the first leader.
  ASSERT_NE(cluster.Launch(zombie_config, /*testing_env=*/true).admin_port, 0) << "the zombie node did not come up";
  auto [first, first_ms] = WaitNewLeader(nodes, {}, rt.Now(), 10000);
  ASSERT_FALSE(first.empty()) << "the first node did not become leader";
  for (int i = 1; i < 3; ++i) ASSERT_NE(cluster.Launch(config).admin_port, 0) << "node " << i << " did not come up";
  client::HttpMetaClient meta(rt, {.bootstrap = {nodes[0].admin(), nodes[1].admin(), nodes[2].admin()}});
  meta::StorageConfig storage;
  storage.type = "posix";
  storage.global_unique_name = "nfs";
  ASSERT_TRUE(meta.AddStorage(storage).ok());

  // 1. SIGSTOP the zombie leader past its lease: another node takes over within the bound and writes.
  auto node_of = [&](const std::string& id) { return *std::find_if(nodes.begin(), nodes.end(), [&](auto& n) { return n.id == id; }); };
  NodeProcess zombie = node_of(first);
  ::kill(zombie.pid, SIGSTOP);
  auto [second, second_ms] = WaitNewLeader(nodes, {zombie.pid}, rt.Now(), kLeaseMs + 2 * kLoopMs + kAllowanceMs);
  ASSERT_FALSE(second.empty()) << "no new leader after the leader was paused";
  EXPECT_NE(second, first);
  std::printf("failover after SIGSTOP: %lld ms (lease %lld, loop %lld)\n", static_cast<long long>(second_ms),
              static_cast<long long>(kLeaseMs), static_cast<long long>(kLoopMs));
  std::vector<std::string> keys = {"k1"};
  auto session = meta.StartWrite(keys, "nfs");
  ASSERT_TRUE(session.ok()) << "the new leader must serve writes: " << session.status().ToString();
  ASSERT_TRUE(meta.FinishWrite(session->session_id, keys, {}, {}).ok());

  // 2. Resume the zombie: it skips the lease check and still serves its old term, so only the
  //    fencing token can stop it. Its writes must be rejected by the indexer.
  ::kill(zombie.pid, SIGCONT);
  const std::string zombie_meta = "127.0.0.1:" + std::to_string(zombie.meta_port);
  auto late = client::PostJson(zombie_meta, "StartWriteCache", json{{"keys", {"k2"}}}, 2000);
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  EXPECT_EQ((*late)["code"], "StaleFencingToken") << "a zombie's write was not rejected by the token: " << late->dump();
  auto late_remove = client::PostJson(zombie_meta, "RemoveCache", json{{"keys", {"k1"}}}, 2000);
  ASSERT_TRUE(late_remove.ok()) << late_remove.status().ToString();
  EXPECT_EQ((*late_remove)["code"], "StaleFencingToken") << "a zombie removed the new leader's entry: "
                                                          << late_remove->dump();
  auto intact = meta.GetLocations(std::vector<std::string>{"k1", "k2"});
  ASSERT_TRUE(intact.ok()) << intact.status().ToString();
  EXPECT_TRUE((*intact)[0].has_value()) << "the new leader's k1 must survive the zombie";
  EXPECT_FALSE((*intact)[1].has_value()) << "the zombie's rejected k2 must not exist";

  // 3. A Redis pause shorter than the lease minus margin: no failover.
  auto before = Leaders(nodes, {});
  ASSERT_EQ(before.size(), 1u);
  redis->Pause();
  rt.SleepFor(std::chrono::milliseconds(kLeaseMs / 3));
  redis->Resume();
  rt.SleepFor(std::chrono::milliseconds(4 * kLoopMs));
  EXPECT_EQ(Leaders(nodes, {}), before) << "a short Redis pause must not move leadership";

  // 4. Pause a normal leader past its lease and resume it: its own lease check refuses writes.
  NodeProcess paused = node_of(before[0]);
  ::kill(paused.pid, SIGSTOP);
  auto [third, third_ms] = WaitNewLeader(nodes, {paused.pid}, rt.Now(), kLeaseMs + 2 * kLoopMs + kAllowanceMs);
  ::kill(paused.pid, SIGCONT);
  ASSERT_FALSE(third.empty()) << "no new leader after the second leader was paused";
  auto refused = client::PostJson("127.0.0.1:" + std::to_string(paused.meta_port), "StartWriteCache",
                                  json{{"keys", {"k3"}}}, 2000);
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ((*refused)["code"], "NotLeader") << "a resumed old leader accepted a write: " << refused->dump();

  // 5. kill -9 the leader: another node takes over within the bound.
  NodeProcess victim = node_of(third);
  ::kill(victim.pid, SIGKILL);
  ::waitpid(victim.pid, nullptr, 0);
  for (auto& n : nodes) if (n.pid == victim.pid) n.pid = -1;
  auto [fourth, fourth_ms] = WaitNewLeader(nodes, {-1}, rt.Now(), kLeaseMs + 2 * kLoopMs + kAllowanceMs);
  ASSERT_FALSE(fourth.empty()) << "no new leader after kill -9 of the leader";
  std::printf("failover after kill -9: %lld ms\n", static_cast<long long>(fourth_ms));
  auto locations = meta.GetLocations(keys);
  ASSERT_TRUE(locations.ok()) << locations.status().ToString();
  EXPECT_TRUE((*locations)[0].has_value()) << "k1 written under an earlier leader must survive in Redis";
}

}  // namespace
}  // namespace kvchaos::service
