// The real-mode Redis Sentinel setup; see sentinel_controller.h.
#include "harness/real/sentinel_controller.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/common/redis_ask.h"
#include "harness/real/node_cluster.h"

namespace kvchaos::harness::real {
namespace {

constexpr const char* kReplUser = "repl";
constexpr const char* kReplPassword = "repl-pw";

}  // namespace

SentinelController::SentinelController(std::string binary, std::string dir)
    : binary_(std::move(binary)), dir_(std::move(dir)) {}

SentinelController::~SentinelController() {
  for (auto* group : {&sentinels_, &servers_}) {
    for (Server& s : *group) {
      if (s.process) s.process->Kill();
    }
  }
}

Status SentinelController::Launch(Server& s, const std::string& config, bool sentinel) {
  const std::string conf_path = dir_ + "/" + s.name + ".conf";
  std::ofstream(conf_path) << config;
  ChildSpec spec;
  spec.name = "redis " + s.name;
  spec.log_path = dir_ + "/" + s.name + ".log";
  spec.argv = {binary_, conf_path};
  if (sentinel) spec.argv.push_back("--sentinel");
  s.process = std::make_unique<ChildProcess>(spec);
  return s.process->Start();
}

Status SentinelController::Start(Duration timeout) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return Status::IoError("sentinel dir " + dir_ + ": " + ec.message(), ec.value());
  std::vector<int> ports;
  while (ports.size() < 5) {
    Result<int> port = PickFreeLoopbackPort();
    if (!port.ok()) return port.status();
    if (std::find(ports.begin(), ports.end(), *port) == ports.end()) ports.push_back(*port);
  }
  const MonoTime deadline = Runtime::Real().Now() + timeout;
  for (int i = 0; i < 2; ++i) {
    Server s{"server" + std::to_string(i), ports[static_cast<size_t>(i)], nullptr};
    std::filesystem::create_directories(dir_ + "/" + s.name, ec);
    // Both know the replication user, so either can serve the other as its replica.
    std::string conf = "port " + std::to_string(s.port) + "\nbind 127.0.0.1\ndir " + dir_ + "/" + s.name +
                       "\nsave \"\"\nappendonly no\nloglevel notice\nrepl-diskless-sync-delay 0\n"
                       "user default on nopass ~* &* +@all\nuser " + kReplUser + " on >" + kReplPassword +
                       " ~* &* +@all\nmasteruser " + kReplUser + "\nmasterauth " + kReplPassword + "\n";
    if (i == 1) conf += "replicaof 127.0.0.1 " + std::to_string(ports[0]) + "\n";
    servers_.push_back(std::move(s));
    if (Status st = Launch(servers_.back(), conf, false); !st.ok()) return st;
  }
  // Sentinels learn the replica from the primary's INFO (at once, then every 10 s): start them
  // once it is connected, so they know it from the start.
  if (Status st = WaitFor("the replica's first sync", deadline - Runtime::Real().Now(), &SentinelController::ReplicaInSync);
      !st.ok()) {
    return st;
  }
  for (int i = 0; i < 3; ++i) {
    Server s{"sentinel" + std::to_string(i), ports[static_cast<size_t>(2 + i)], nullptr};
    const std::string m = kMasterName;
    // A sentinel rewrites its config file with what it learnt: one file each.
    const std::string conf = "port " + std::to_string(s.port) + "\nbind 127.0.0.1\ndir " + dir_ + "\n" +
                             "sentinel monitor " + m + " 127.0.0.1 " + std::to_string(ports[0]) + " 2\n" +
                             "sentinel down-after-milliseconds " + m + " 1000\n" + "sentinel failover-timeout " + m +
                             " 2000\n" + "sentinel parallel-syncs " + m + " 1\n";
    sentinels_.push_back(std::move(s));
    if (Status st = Launch(sentinels_.back(), conf, true); !st.ok()) return st;
  }
  return WaitFor("the sentinels to know the replica and each other", deadline - Runtime::Real().Now(),
                 &SentinelController::SentinelsReady);
}

Status SentinelController::WaitFor(const std::string& what, Duration timeout, bool (SentinelController::*done)() const) {
  Runtime& rt = Runtime::Real();
  const MonoTime deadline = rt.Now() + timeout;
  while (!(this->*done)()) {
    for (const auto* group : {&servers_, &sentinels_}) {
      for (const Server& s : *group) {
        const bool killed_on_purpose = primary_killed_ && &s == &servers_[0];
        if (s.process && !killed_on_purpose && !s.process->Running()) {
          return Status::Unavailable(s.process->name() + " " + s.process->ExitDescription() + " (log: " +
                                     s.process->log_path() + ")");
        }
      }
    }
    if (StopRequested()) return Interrupted("waiting for " + what);
    if (rt.Now() >= deadline) {
      return Status::Timeout("waited " + std::to_string(ToMillis(timeout)) + " ms for " + what + " (logs in " + dir_ + ")");
    }
    rt.SleepFor(std::chrono::milliseconds(50));
  }
  return Status::Ok();
}

bool SentinelController::ReplicaInSync() const {
  RedisReply info = RedisAsk(servers_[1].port, {"INFO", "replication"});
  if (info == nullptr || RedisReplyText(info.get()).find("master_link_status:up") == std::string::npos) return false;
  RedisReply waited = RedisAsk(servers_[0].port, {"WAIT", "1", "400"});
  return waited != nullptr && waited->type == REDIS_REPLY_INTEGER && waited->integer >= 1;
}

bool SentinelController::SentinelsReady() const {
  for (const Server& s : sentinels_) {
    if (RedisArrayElements(RedisAsk(s.port, {"SENTINEL", "replicas", kMasterName}).get()) != 1 ||
        RedisArrayElements(RedisAsk(s.port, {"SENTINEL", "sentinels", kMasterName}).get()) != 2) {
      return false;
    }
  }
  return true;
}

bool SentinelController::Promoted() const {
  const std::string replica = std::to_string(servers_[1].port);
  for (const Server& s : sentinels_) {
    RedisReply r = RedisAsk(s.port, {"SENTINEL", "get-master-addr-by-name", kMasterName});
    if (RedisArrayElements(r.get()) != 2 || RedisReplyText(r->element[1]) != replica) return false;
  }
  RedisReply role = RedisAsk(servers_[1].port, {"ROLE"});
  return RedisArrayElements(role.get()) > 0 && RedisReplyText(role->element[0]) == "master";
}

std::string SentinelController::uri() const {
  std::string uri = "redis+sentinel://";
  for (size_t i = 0; i < sentinels_.size(); ++i) {
    uri += (i > 0 ? "," : "") + std::string("127.0.0.1:") + std::to_string(sentinels_[i].port);
  }
  return uri + "/" + kMasterName;
}

std::vector<int> SentinelController::ClientPorts() const {
  std::vector<int> ports;
  for (const auto* group : {&servers_, &sentinels_}) {
    for (const Server& s : *group) ports.push_back(s.port);
  }
  return ports;
}

Status SentinelController::CutReplication() {
  const int primary = servers_[0].port;
  RedisReply off = RedisAsk(primary, {"ACL", "SETUSER", kReplUser, "off"});
  RedisReply kill = RedisAsk(primary, {"CLIENT", "KILL", "USER", kReplUser});
  if (off == nullptr || off->type == REDIS_REPLY_ERROR || kill == nullptr || kill->type == REDIS_REPLY_ERROR) {
    return Status::Unavailable("cannot cut replication on the primary 127.0.0.1:" + std::to_string(primary));
  }
  return Status::Ok();
}

Status SentinelController::Failover(Duration timeout) {
  servers_[0].process->Kill();
  primary_killed_ = true;
  return WaitFor("the sentinels to promote the replica", timeout, &SentinelController::Promoted);
}

}  // namespace kvchaos::harness::real
