#include "testing/redis_sentinel_cluster.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "core/common/redis_ask.h"
#include "testing/free_port.h"

namespace kvchaos::testing {
namespace {

constexpr const char* kReplUser = "repl";
constexpr const char* kReplPassword = "repl-pw";

std::string FindRedisServer() { return FindExecutable({"/usr/bin/redis-server", "/usr/local/bin/redis-server"}); }

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

std::string RedisSentinelCluster::SkipReason() {
  return "redis-server is not installed (ci/install-deps.sh installs it); looked in /usr/bin and /usr/local/bin";
}

std::unique_ptr<RedisSentinelCluster> RedisSentinelCluster::Start() {
  if (FindRedisServer().empty()) return nullptr;
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<RedisSentinelCluster> cluster(new RedisSentinelCluster());
    try {
      cluster->Launch();
      cluster->WaitReady();
      return cluster;
    } catch (const std::exception&) {
      if (attempt == 2) throw;  // a port may have been taken in between: try others
    }
  }
}

void RedisSentinelCluster::Launch() {
  std::vector<int> ports;
  for (int i = 0; i < 5; ++i) {
    int port = 0;
    do port = PickFreeLoopbackPort();
    while (std::find(ports.begin(), ports.end(), port) != ports.end());
    ports.push_back(port);
  }
  const std::string dir = dir_.str();
  for (int i = 0; i < 2; ++i) {
    // Both servers know the replication user, so either can serve the other as its replica.
    const std::string name = "server" + std::to_string(i);
    std::string conf = "port " + std::to_string(ports[i]) + "\nbind 127.0.0.1\ndir " + dir + "/" + name +
                       "\nsave \"\"\nappendonly no\nloglevel notice\nrepl-diskless-sync-delay 0\n"
                       "user default on nopass ~* &* +@all\n"
                       "user " + kReplUser + " on >" + kReplPassword + " ~* &* +@all\n"
                       "masteruser " + kReplUser + "\nmasterauth " + kReplPassword + "\n";
    if (i == 1) conf += "replicaof 127.0.0.1 " + std::to_string(ports[0]) + "\n";
    std::filesystem::create_directories(dir + "/" + name);
    WriteFile(dir + "/" + name + ".conf", conf);
    servers_.push_back({ports[i], std::make_unique<ChildProcess>(
                                      std::vector<std::string>{FindRedisServer(), dir + "/" + name + ".conf"},
                                      dir + "/" + name + ".log")});
  }
  // Sentinels learn the replica from the primary's INFO, asked at once and then every 10 s: start
  // them once it is connected, so they know it from the start.
  for (int round = 0; !WaitForReplication(std::chrono::milliseconds(0)); ++round) {
    if (round == 200 || servers_[0].process->Exited() || servers_[1].process->Exited()) {
      throw std::runtime_error("the replica of the sentinel setup did not sync (logs in " + dir + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (int i = 0; i < 3; ++i) {
    const std::string name = "sentinel" + std::to_string(i);
    const std::string m = kMasterName;
    // The sentinel rewrites its config file (what it learnt), so each has one of its own.
    WriteFile(dir + "/" + name + ".conf",
              "port " + std::to_string(ports[2 + i]) + "\nbind 127.0.0.1\ndir " + dir + "\n" +
                  "sentinel monitor " + m + " 127.0.0.1 " + std::to_string(ports[0]) + " 2\n" +
                  "sentinel down-after-milliseconds " + m + " 1000\n" +
                  "sentinel failover-timeout " + m + " 2000\n" + "sentinel parallel-syncs " + m + " 1\n");
    sentinels_.push_back({ports[2 + i], std::make_unique<ChildProcess>(
                                            std::vector<std::string>{FindRedisServer(), dir + "/" + name + ".conf",
                                                                     "--sentinel"},
                                            dir + "/" + name + ".log")});
  }
}

void RedisSentinelCluster::WaitReady() {
  const std::string m = kMasterName;
  for (int round = 0; round < 200; ++round) {
    for (const auto* group : {&servers_, &sentinels_}) {
      for (const Process& p : *group) {
        if (p.process->Exited()) {
          throw std::runtime_error("a redis-server of the sentinel setup exited at start (logs in " + dir_.str() + ")");
        }
      }
    }
    bool ready = WaitForReplication(std::chrono::milliseconds(0));
    for (const Process& s : sentinels_) {
      ready = ready && RedisArrayElements(RedisAsk(s.port, {"SENTINEL", "replicas", m}).get()) == 1 &&
              RedisArrayElements(RedisAsk(s.port, {"SENTINEL", "sentinels", m}).get()) == 2;
    }
    if (ready) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("the sentinel setup in " + dir_.str() + " was not ready within 20 s");
}

RedisSentinelCluster::~RedisSentinelCluster() = default;

std::string RedisSentinelCluster::Uri(const std::string& query) const {
  std::string uri = "redis+sentinel://";
  for (size_t i = 0; i < sentinels_.size(); ++i) {
    uri += (i > 0 ? "," : "") + std::string("127.0.0.1:") + std::to_string(sentinels_[i].port);
  }
  return uri + "/" + kMasterName + query;
}

int RedisSentinelCluster::PrimaryPort() const {
  RedisReply r = RedisAsk(sentinels_[0].port, {"SENTINEL", "get-master-addr-by-name", kMasterName});
  if (RedisArrayElements(r.get()) != 2) return 0;
  return std::atoi(RedisReplyText(r->element[1]).c_str());
}

bool RedisSentinelCluster::WaitForPrimary(int i, std::chrono::milliseconds limit) const {
  const auto end = std::chrono::steady_clock::now() + limit;
  const int port = server_port(i);
  do {
    bool named = true;
    for (const Process& s : sentinels_) {
      RedisReply r = RedisAsk(s.port, {"SENTINEL", "get-master-addr-by-name", kMasterName});
      named = named && RedisArrayElements(r.get()) == 2 && std::atoi(RedisReplyText(r->element[1]).c_str()) == port;
    }
    RedisReply role = RedisAsk(port, {"ROLE"});
    if (named && RedisArrayElements(role.get()) > 0 && RedisReplyText(role->element[0]) == "master") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < end);
  return false;
}

bool RedisSentinelCluster::WaitForReplication(std::chrono::milliseconds limit) const {
  // WAIT needs a write to wait for when the replica has never been in sync: INFO tells the link.
  const auto end = std::chrono::steady_clock::now() + limit;
  do {
    RedisReply info = RedisAsk(server_port(1), {"INFO", "replication"});
    if (info != nullptr && RedisReplyText(info.get()).find("master_link_status:up") != std::string::npos) {
      RedisReply waited = RedisAsk(server_port(0), {"WAIT", "1", "400"});
      if (waited != nullptr && waited->type == REDIS_REPLY_INTEGER && waited->integer >= 1) return true;
    }
    if (limit.count() == 0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < end);
  return false;
}

void RedisSentinelCluster::CutReplication() {
  const int primary = server_port(0);
  RedisReply off = RedisAsk(primary, {"ACL", "SETUSER", kReplUser, "off"});
  RedisReply kill = RedisAsk(primary, {"CLIENT", "KILL", "USER", kReplUser});
  if (off == nullptr || off->type == REDIS_REPLY_ERROR || kill == nullptr || kill->type == REDIS_REPLY_ERROR) {
    throw std::runtime_error("cannot cut replication on 127.0.0.1:" + std::to_string(primary));
  }
  // The replica notices at once (its link was closed) and cannot log in again.
  for (int i = 0; i < 100; ++i) {
    RedisReply info = RedisAsk(server_port(1), {"INFO", "replication"});
    if (info != nullptr && RedisReplyText(info.get()).find("master_link_status:down") != std::string::npos) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("the replica still replicates after CutReplication");
}

void RedisSentinelCluster::KillServer(int i) { servers_[static_cast<size_t>(i)].process->Kill(); }
void RedisSentinelCluster::PauseServer(int i) { servers_[static_cast<size_t>(i)].process->Pause(); }
void RedisSentinelCluster::ResumeServer(int i) { servers_[static_cast<size_t>(i)].process->Resume(); }

}  // namespace kvchaos::testing
