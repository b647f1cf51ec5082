// The real-mode etcd cluster; see etcd_controller.h.
#include "harness/real/etcd_controller.h"

#include <algorithm>
#include <filesystem>

#include "core/election/coordination_uri.h"
#include "core/election/etcd_gateway.h"
#include "harness/real/node_cluster.h"

namespace kvchaos::harness::real {

std::string FindEtcd() { return FindProgram("etcd"); }

EtcdController::EtcdController(std::string binary, std::string dir, int members)
    : binary_(std::move(binary)), dir_(std::move(dir)), members_(static_cast<size_t>(members)) {}

EtcdController::~EtcdController() {
  for (Member& m : members_) {
    if (m.process) m.process->Kill();
  }
}

ChildSpec EtcdController::SpecOf(const Member& m, bool first_start) const {
  const std::string client = "http://127.0.0.1:" + std::to_string(m.client_port);
  const std::string peer = "http://127.0.0.1:" + std::to_string(m.peer_port);
  ChildSpec spec;
  spec.name = "etcd " + m.name;
  spec.log_path = dir_ + "/" + m.name + "/etcd.log";
  spec.argv = {binary_, "--name", m.name, "--data-dir", dir_ + "/" + m.name + "/data", "--listen-client-urls", client,
               "--advertise-client-urls", client, "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
               "--initial-cluster", initial_cluster_, "--initial-cluster-state", first_start ? "new" : "existing",
               "--initial-cluster-token", "kvchaos-run", "--heartbeat-interval", "50", "--election-timeout", "500",
               "--logger", "zap", "--log-level", "warn"};
  return spec;
}

Status EtcdController::Start(Duration timeout) {
  std::vector<int> taken;
  auto pick = [&taken]() -> Result<int> {
    for (int attempt = 0; attempt < 20; ++attempt) {
      Result<int> port = PickFreeLoopbackPort();
      if (!port.ok()) return port;
      if (std::find(taken.begin(), taken.end(), *port) == taken.end()) {
        taken.push_back(*port);
        return port;
      }
    }
    return Status::Unavailable("no free loopback port for etcd");
  };
  std::vector<int> all;
  for (size_t i = 0; i < members_.size(); ++i) {
    Member& m = members_[i];
    m.name = "etcd" + std::to_string(i);
    Result<int> client = pick();
    if (!client.ok()) return client.status();
    Result<int> peer = pick();
    if (!peer.ok()) return peer.status();
    m.client_port = *client;
    m.peer_port = *peer;
    initial_cluster_ += (i > 0 ? "," : "") + m.name + "=http://127.0.0.1:" + std::to_string(m.peer_port);
    all.push_back(static_cast<int>(i));
  }
  for (Member& m : members_) {
    std::error_code ec;
    std::filesystem::create_directories(dir_ + "/" + m.name, ec);
    if (ec) return Status::IoError("etcd dir " + dir_ + "/" + m.name + ": " + ec.message(), ec.value());
    m.process = std::make_unique<ChildProcess>(SpecOf(m, /*first_start=*/true));
    if (Status s = m.process->Start(); !s.ok()) return s;
  }
  return WaitServing(all, timeout);
}

Status EtcdController::WaitServing(const std::vector<int>& members, Duration timeout) {
  Runtime& rt = Runtime::Real();
  const MonoTime deadline = rt.Now() + timeout;
  std::vector<int> waiting = members;
  while (!waiting.empty()) {
    const int i = waiting.front();
    Member& m = members_[static_cast<size_t>(i)];
    // A range read is linearizable: it needs the member to be in a cluster with a leader.
    election::EtcdEndpoints one;
    one.members = {{"127.0.0.1", m.client_port}};
    one.timeout_ms = 300;
    one.retry_count = 0;
    election::EtcdGateway gateway(rt, one);
    if (gateway.Call("/v3/kv/range", {{"key", "a3ZjaGFvcy1oZWFsdGg="}}, rt.Now() + std::chrono::milliseconds(300)).ok()) {
      waiting.erase(waiting.begin());
      continue;
    }
    if (StopRequested()) return Interrupted("waiting for " + m.process->name());
    if (!m.process->Running()) {
      return Status::Unavailable(m.process->name() + " " + m.process->ExitDescription() + " at start (log: " +
                                 m.process->log_path() + ")");
    }
    if (rt.Now() >= deadline) {
      return Status::Timeout(m.process->name() + " did not serve a read within " + std::to_string(ToMillis(timeout)) +
                             " ms (log: " + m.process->log_path() + ")");
    }
    rt.SleepFor(std::chrono::milliseconds(50));
  }
  return Status::Ok();
}

std::string EtcdController::uri() const {
  std::string uri = "etcd://";
  for (size_t i = 0; i < members_.size(); ++i) {
    uri += (i > 0 ? "," : "") + std::string("127.0.0.1:") + std::to_string(members_[i].client_port);
  }
  return uri;
}

void EtcdController::Kill(int member) { members_[static_cast<size_t>(member)].process->Kill(); }

Status EtcdController::Restart(int member, Duration timeout) {
  Member& m = members_[static_cast<size_t>(member)];
  m.process->Kill();
  // It rejoins with its data: the cluster it was created in is "existing" now.
  m.process = std::make_unique<ChildProcess>(SpecOf(m, /*first_start=*/false));
  if (Status s = m.process->Start(); !s.ok()) return s;
  return WaitServing({member}, timeout);
}

void EtcdController::Pause(int member) { (void)members_[static_cast<size_t>(member)].process->Signal(SIGSTOP); }
void EtcdController::Resume(int member) { (void)members_[static_cast<size_t>(member)].process->Signal(SIGCONT); }

}  // namespace kvchaos::harness::real
