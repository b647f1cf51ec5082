// Three `kvchaos node` processes on one real redis-server (coordination and meta index), all on
// loopback: the leader is SIGSTOPped, then resumed; the next leader is kill -9'd; Redis pauses for
// less than a lease. Checks: one node serves at a time, a new leader takes over within
// lease_ms + 2 × loop_interval_ms (plus a polling allowance on a loaded machine), a resumed old
// leader refuses writes, and a short Redis pause causes no failover.
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
  NodeProcess Launch(const std::string& config) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    if (pid == 0) {
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

TEST(MultiprocessNodeTest, FailoverPauseAndRedisOutage) {
  auto redis = kvchaos::testing::RedisServer::Start();
  if (!redis) GTEST_SKIP() << kvchaos::testing::RedisServer::SkipReason();
  kvchaos::testing::TempDir dir("kvchaos-mp-node");
  std::string config = (dir.path() / "node.yaml").string();
  {
    std::ofstream f(config);
    f << "kvcm:\n  coordination: {uri: \"" << redis->uri() << "/?timeout_ms=200&retry_count=0\"}\n"
      << "  leader_elector: {lease_ms: " << kLeaseMs << ", loop_interval_ms: " << kLoopMs << "}\n"
      << "  service: {meta_http_port: 0, admin_http_port: 0, heartbeat_interval_ms: 200, heartbeat_ttl_ms: 1000}\n"
      << "  meta: {indexer_uri: \"" << redis->uri() << "/?timeout_ms=200&retry_count=0\"}\n";
  }
  Cluster cluster;
  for (int i = 0; i < 3; ++i) ASSERT_NE(cluster.Launch(config).admin_port, 0) << "node " << i << " did not come up";
  auto& nodes = cluster.nodes;
  Runtime& rt = Runtime::Real();
  auto [first, first_ms] = WaitNewLeader(nodes, {}, rt.Now(), 10000);
  ASSERT_FALSE(first.empty()) << "no leader among three fresh nodes";
  client::HttpMetaClient meta(rt, {.bootstrap = {nodes[0].admin(), nodes[1].admin(), nodes[2].admin()}});
  meta::StorageConfig storage;
  storage.type = "posix";
  storage.global_unique_name = "nfs";
  ASSERT_TRUE(meta.AddStorage(storage).ok());

  // 1. SIGSTOP the leader: another node must take over within the bound.
  auto node_of = [&](const std::string& id) { return *std::find_if(nodes.begin(), nodes.end(), [&](auto& n) { return n.id == id; }); };
  NodeProcess old = node_of(first);
  ::kill(old.pid, SIGSTOP);
  auto [second, second_ms] = WaitNewLeader(nodes, {old.pid}, rt.Now(), kLeaseMs + 2 * kLoopMs + kAllowanceMs);
  ASSERT_FALSE(second.empty()) << "no new leader after the leader was paused";
  EXPECT_NE(second, first);
  std::printf("failover after SIGSTOP: %lld ms (lease %lld, loop %lld)\n", static_cast<long long>(second_ms),
              static_cast<long long>(kLeaseMs), static_cast<long long>(kLoopMs));
  std::vector<std::string> keys = {"k1"};
  auto session = meta.StartWrite(keys, "nfs");
  ASSERT_TRUE(session.ok()) << "the new leader must serve writes: " << session.status().ToString();
  ASSERT_TRUE(meta.FinishWrite(session->session_id, keys, {}, {}).ok());

  // 2. Resume the old leader: its lease is over, so it must refuse a write at once.
  ::kill(old.pid, SIGCONT);
  auto late = client::PostJson("127.0.0.1:" + std::to_string(old.meta_port), "StartWriteCache", json{{"keys", {"k2"}}}, 2000);
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  EXPECT_EQ((*late)["code"], "NotLeader") << "a resumed old leader accepted a write: " << late->dump();

  // 3. A Redis pause shorter than the lease minus margin: no failover.
  auto before = Leaders(nodes, {});
  ASSERT_EQ(before.size(), 1u);
  redis->Pause();
  rt.SleepFor(std::chrono::milliseconds(kLeaseMs / 3));
  redis->Resume();
  rt.SleepFor(std::chrono::milliseconds(4 * kLoopMs));
  EXPECT_EQ(Leaders(nodes, {}), before) << "a short Redis pause must not move leadership";

  // 4. kill -9 the leader: another node takes over within the bound.
  NodeProcess victim = node_of(before[0]);
  ::kill(victim.pid, SIGKILL);
  ::waitpid(victim.pid, nullptr, 0);
  for (auto& n : nodes) if (n.pid == victim.pid) n.pid = -1;
  auto [third, third_ms] = WaitNewLeader(nodes, {-1}, rt.Now(), kLeaseMs + 2 * kLoopMs + kAllowanceMs);
  ASSERT_FALSE(third.empty()) << "no new leader after kill -9 of the leader";
  std::printf("failover after kill -9: %lld ms\n", static_cast<long long>(third_ms));
  auto locations = meta.GetLocations(keys);
  ASSERT_TRUE(locations.ok()) << locations.status().ToString();
  EXPECT_TRUE((*locations)[0].has_value()) << "k1 written under the previous leader must survive in Redis";
}

}  // namespace
}  // namespace kvchaos::service
