// The real-mode Redis Sentinel setup; see sentinel_controller.h.
#include "harness/real/sentinel_controller.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness/real/node_cluster.h"

namespace kvchaos::harness::real {
namespace {

constexpr const char* kReplUser = "repl";
constexpr const char* kReplPassword = "repl-pw";

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

// One command on a connection of its own; nullptr when 127.0.0.1:port does not answer in 500 ms.
Reply Ask(int port, const std::vector<std::string>& argv) {
  const timeval timeout{0, 500'000};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port, timeout);
  if (c == nullptr) return nullptr;
  Reply reply;
  if (c->err == 0 && redisSetTimeout(c, timeout) == REDIS_OK) {
    std::vector<const char*> args;
    std::vector<size_t> lens;
    for (const std::string& a : argv) {
      args.push_back(a.c_str());
      lens.push_back(a.size());
    }
    reply.reset(static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(args.size()), args.data(), lens.data())));
  }
  redisFree(c);
  return reply;
}

size_t Elements(const Reply& r) { return r != nullptr && r->type == REDIS_REPLY_ARRAY ? r->elements : 0; }

std::string Str(const redisReply* r) { return r != nullptr && r->str != nullptr ? std::string(r->str, r->len) : ""; }

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
  Reply info = Ask(servers_[1].port, {"INFO", "replication"});
  if (info == nullptr || Str(info.get()).find("master_link_status:up") == std::string::npos) return false;
  Reply waited = Ask(servers_[0].port, {"WAIT", "1", "400"});
  return waited != nullptr && waited->type == REDIS_REPLY_INTEGER && waited->integer >= 1;
}

bool SentinelController::SentinelsReady() const {
  for (const Server& s : sentinels_) {
    if (Elements(Ask(s.port, {"SENTINEL", "replicas", kMasterName})) != 1 ||
        Elements(Ask(s.port, {"SENTINEL", "sentinels", kMasterName})) != 2) {
      return false;
    }
  }
  return true;
}

bool SentinelController::Promoted() const {
  const std::string replica = std::to_string(servers_[1].port);
  for (const Server& s : sentinels_) {
    Reply r = Ask(s.port, {"SENTINEL", "get-master-addr-by-name", kMasterName});
    if (Elements(r) != 2 || Str(r->element[1]) != replica) return false;
  }
  Reply role = Ask(servers_[1].port, {"ROLE"});
  return Elements(role) > 0 && Str(role->element[0]) == "master";
}

std::string SentinelController::uri() const {
  std::string uri = "redis+sentinel://";
  for (size_t i = 0; i < sentinels_.size(); ++i) {
    uri += (i > 0 ? "," : "") + std::string("127.0.0.1:") + std::to_string(sentinels_[i].port);
  }
  return uri + "/" + kMasterName;
}

Status SentinelController::CutReplication() {
  const int primary = servers_[0].port;
  Reply off = Ask(primary, {"ACL", "SETUSER", kReplUser, "off"});
  Reply kill = Ask(primary, {"CLIENT", "KILL", "USER", kReplUser});
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
