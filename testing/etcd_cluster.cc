#include "testing/etcd_cluster.h"

#include <httplib.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "testing/free_port.h"

namespace kvchaos::testing {
namespace {

std::string FindEtcd() { return FindExecutable({"/usr/bin/etcd", "/usr/local/bin/etcd"}); }

// The body member i answers to `path`, or "" when it does not answer within 500 ms.
std::string Ask(int port, const std::string& path, const std::string& body) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(std::chrono::milliseconds(500));
  client.set_read_timeout(std::chrono::milliseconds(500));
  auto res = body.empty() ? client.Get(path.c_str()) : client.Post(path.c_str(), body, "application/json");
  return res ? res->body : "";
}

}  // namespace

std::string EtcdCluster::SkipReason() {
  return "etcd is not installed (ci/install-deps.sh installs etcd-server); looked in /usr/bin and /usr/local/bin";
}

std::unique_ptr<EtcdCluster> EtcdCluster::Start(int members) {
  if (FindEtcd().empty()) return nullptr;
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
    std::vector<int> all;
    std::vector<int> ports;
    auto pick = [&ports] {
      int port = 0;
      do port = PickFreeLoopbackPort();
      while (std::find(ports.begin(), ports.end(), port) != ports.end());
      ports.push_back(port);
      return port;
    };
    for (int i = 0; i < members; ++i) {
      Member m;
      m.name = "m" + std::to_string(i);
      m.client_port = pick();
      m.peer_port = pick();
      cluster->initial_cluster_ += (i > 0 ? "," : "") + m.name + "=http://127.0.0.1:" + std::to_string(m.peer_port);
      cluster->members_.push_back(std::move(m));
      all.push_back(i);
    }
    try {
      for (int i = 0; i < members; ++i) cluster->Launch(i, /*first_start=*/true);
      cluster->WaitHealthy(all);
      return cluster;
    } catch (const std::exception&) {
      if (attempt == 2) throw;  // a port may have been taken in between: try others
    }
  }
}

void EtcdCluster::Launch(int i, bool first_start) {
  Member& m = members_[static_cast<size_t>(i)];
  const std::string client = "http://127.0.0.1:" + std::to_string(m.client_port);
  const std::string peer = "http://127.0.0.1:" + std::to_string(m.peer_port);
  const std::string data = dir_.str() + "/" + m.name;
  m.process = std::make_unique<ChildProcess>(
      std::vector<std::string>{FindEtcd(), "--name", m.name, "--data-dir", data, "--listen-client-urls", client,
                               "--advertise-client-urls", client, "--listen-peer-urls", peer,
                               "--initial-advertise-peer-urls", peer, "--initial-cluster", initial_cluster_,
                               "--initial-cluster-state", first_start ? "new" : "existing",
                               "--initial-cluster-token", "kvchaos-test", "--heartbeat-interval", "50",
                               "--election-timeout", "500", "--logger", "zap", "--log-level", "warn"},
      data + ".log");
}

void EtcdCluster::WaitHealthy(const std::vector<int>& members) {
  for (int round = 0; round < 400; ++round) {
    bool all = true;
    for (int i : members) {
      Member& m = members_[static_cast<size_t>(i)];
      if (m.process->Exited()) {
        throw std::runtime_error("etcd member " + m.name + " exited at start (see " + dir_.str() + "/" + m.name +
                                 ".log)");
      }
      all = all && Ask(m.client_port, "/health", "").find("\"health\":\"true\"") != std::string::npos;
    }
    if (all) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("etcd cluster in " + dir_.str() + " was not healthy within 20 s");
}

EtcdCluster::~EtcdCluster() = default;

std::string EtcdCluster::Endpoint(int i) const {
  return "127.0.0.1:" + std::to_string(members_[static_cast<size_t>(i)].client_port);
}

std::string EtcdCluster::Uri(const std::string& query) const {
  std::string uri = "etcd://";
  for (int i = 0; i < size(); ++i) uri += (i > 0 ? "," : "") + Endpoint(i);
  return uri + "/" + query;
}

void EtcdCluster::Pause(int i) { members_[static_cast<size_t>(i)].process->Pause(); }
void EtcdCluster::Resume(int i) { members_[static_cast<size_t>(i)].process->Resume(); }
void EtcdCluster::Kill(int i) { members_[static_cast<size_t>(i)].process->Kill(); }

void EtcdCluster::Restart(int i) {
  Kill(i);
  Launch(i, /*first_start=*/false);
  WaitHealthy({i});
}

bool EtcdCluster::WaitUntilLeaderless(int i, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    // The status call is served by the member alone; it names no leader when it has none.
    const std::string answer = Ask(members_[static_cast<size_t>(i)].client_port, "/v3/maintenance/status", "{}");
    if (!answer.empty() && answer.find("\"leader\"") == std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace kvchaos::testing
