// The `kvchaos node` processes of a real-mode run; see node_cluster.h.
#include "harness/real/node_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/client/leader_discovery.h"

namespace kvchaos::harness::real {

Result<int> PickFreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(std::string("socket: ") + std::strerror(errno), errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::IoError(std::string("bind 127.0.0.1:0: ") + std::strerror(err), err);
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

NodeCluster::NodeCluster(NodeClusterSpec spec) : spec_(std::move(spec)) {}

NodeCluster::~NodeCluster() { KillAll(); }

std::string NodeCluster::AdminEndpoint(int i) const {
  return "127.0.0.1:" + std::to_string(nodes_[static_cast<size_t>(i)]->admin_port);
}
std::string NodeCluster::MetaEndpoint(int i) const {
  return "127.0.0.1:" + std::to_string(nodes_[static_cast<size_t>(i)]->meta_port);
}
std::vector<std::string> NodeCluster::AdminEndpoints() const {
  std::vector<std::string> out;
  for (int i = 0; i < size(); ++i) out.push_back(AdminEndpoint(i));
  return out;
}
std::vector<std::string> NodeCluster::ClientAdminEndpoints() const {
  std::vector<std::string> out;
  for (int i = 0; i < size(); ++i) {
    const Node& n = *nodes_[static_cast<size_t>(i)];
    out.push_back(n.admin_front ? "127.0.0.1:" + std::to_string(n.admin_front->port()) : AdminEndpoint(i));
  }
  return out;
}
std::vector<LinkProxy*> NodeCluster::ClientPath(int i) const {
  const Node& n = *nodes_[static_cast<size_t>(i)];
  if (!n.meta_front) return {};
  return {n.meta_front.get(), n.admin_front.get()};
}

int NodeCluster::IndexOf(const std::string& node_id) const {
  for (int i = 0; i < size(); ++i) {
    if (NodeId(i) == node_id) return i;
  }
  return -1;
}

Status NodeCluster::Start(Duration timeout) {
  std::error_code ec;
  std::filesystem::create_directories(spec_.dir, ec);
  if (ec) return Status::IoError("node dir " + spec_.dir + ": " + ec.message(), ec.value());
  std::vector<int> used;
  auto pick = [&]() -> Result<int> {
    // Two picks in a row can return the same port (each was free when asked): keep them apart.
    for (int attempt = 0; attempt < 20; ++attempt) {
      Result<int> p = PickFreeLoopbackPort();
      if (!p.ok()) return p;
      if (std::find(used.begin(), used.end(), *p) == used.end()) {
        used.push_back(*p);
        return p;
      }
    }
    return Status::Unavailable("no distinct free loopback ports");
  };
  for (int i = 0; i < spec_.nodes; ++i) {
    auto node = std::make_unique<Node>();
    Result<int> meta = pick();
    if (!meta.ok()) return meta.status();
    Result<int> admin = pick();
    if (!admin.ok()) return admin.status();
    node->meta_port = *meta;
    node->admin_port = *admin;
    std::string advertised;
    if (spec_.client_proxies) {
      node->meta_front = std::make_unique<LinkProxy>(NodeId(i) + "m", node->meta_port);
      node->admin_front = std::make_unique<LinkProxy>(NodeId(i) + "a", node->admin_port);
      if (Status s = node->meta_front->Start(); !s.ok()) return s;
      if (Status s = node->admin_front->Start(); !s.ok()) return s;
      advertised = ", advertised_meta_port: " + std::to_string(node->meta_front->port()) +
                   ", advertised_admin_port: " + std::to_string(node->admin_front->port());
    }
    node->config_path = spec_.dir + "/" + NodeId(i) + ".yaml";
    std::ofstream f(node->config_path);
    f << "# written by kvchaos run (real mode)\n"
      << "kvcm:\n"
      << "  coordination: {uri: \""
      << (spec_.node_coordination_uris.size() == static_cast<size_t>(spec_.nodes)
              ? spec_.node_coordination_uris[static_cast<size_t>(i)]
              : spec_.coordination_uri)
      << "\"}\n"
      << "  leader_elector: {node_id: \"" << NodeId(i) << "\", lease_ms: " << spec_.lease_ms
      << ", loop_interval_ms: " << spec_.loop_interval_ms << ", safety_margin_ms: " << spec_.elector.safety_margin_ms
      << ", forbid_campaign_time_ms: " << spec_.elector.forbid_campaign_ms << "}\n"
      << "  service: {listen_host: \"127.0.0.1\", meta_http_port: " << node->meta_port
      << ", admin_http_port: " << node->admin_port << advertised
      << ", heartbeat_interval_ms: 200, heartbeat_ttl_ms: 1000}\n"
      << "  meta: {indexer_uri: \"" << spec_.indexer_uri << "\"}\n";
    f.close();
    if (!f) return Status::IoError("cannot write " + node->config_path, errno);
    std::vector<std::string> env = spec_.clocks ? spec_.clocks->Env(i) : std::vector<std::string>{};
    if (spec_.node_connect_redirects.size() == static_cast<size_t>(spec_.nodes)) {
      AddConnectRedirects(env, spec_.connect_preload, spec_.node_connect_redirects[static_cast<size_t>(i)]);
    }
    node->child = std::make_unique<ChildProcess>(ChildSpec{
        NodeId(i), {spec_.kvchaos_binary, "node", "--config", node->config_path}, spec_.dir + "/" + NodeId(i) + ".log",
        SIGKILL, std::move(env)});
    nodes_.push_back(std::move(node));
  }
  for (int i = 0; i < size(); ++i) {
    if (Status s = StartProcess(i); !s.ok()) return s;
    nodes_[static_cast<size_t>(i)]->state = NodeState::kUp;
  }
  for (int i = 0; i < size(); ++i) {
    if (Status s = WaitAnswers(i, timeout); !s.ok()) return s;
  }
  return Status::Ok();
}

Status NodeCluster::StartProcess(int i) {
  // A restarted node keeps its fake clock: the file is rewritten for the new process's start.
  if (spec_.clocks) {
    if (Status s = spec_.clocks->ProcessStarting(i, Runtime::Real().Now()); !s.ok()) return s;
  }
  return nodes_[static_cast<size_t>(i)]->child->Start();
}

Status NodeCluster::WaitAnswers(int i, Duration timeout) {
  Node& n = *nodes_[static_cast<size_t>(i)];
  Runtime& rt = Runtime::Real();
  const MonoTime deadline = rt.Now() + timeout;
  while (rt.Now() < deadline) {
    if (client::PostJson(AdminEndpoint(i), "GetClusterInfo", nlohmann::json::object(), 300).ok()) return Status::Ok();
    if (StopRequested()) return Interrupted("waiting for " + NodeId(i));
    if (!n.child->Running()) {
      n.state = NodeState::kDown;
      return Status::Unavailable(NodeId(i) + " " + n.child->ExitDescription() + " at start (log: " +
                                 n.child->log_path() + ")");
    }
    rt.SleepFor(std::chrono::milliseconds(20));
  }
  return Status::Timeout(NodeId(i) + " did not answer on " + AdminEndpoint(i) + " within " +
                         std::to_string(ToMillis(timeout)) + " ms (log: " + n.child->log_path() + ")");
}

bool NodeCluster::Crash(int i) {
  Node& n = *nodes_[static_cast<size_t>(i)];
  if (n.state == NodeState::kDown) return false;
  n.state = NodeState::kDown;
  n.child->Kill();
  return true;
}

bool NodeCluster::Stop(int i) {
  Node& n = *nodes_[static_cast<size_t>(i)];
  if (n.state == NodeState::kDown) return false;
  n.state = NodeState::kDown;
  n.child->Stop(SIGTERM, std::chrono::seconds(5));
  return true;
}

Status NodeCluster::Restart(int i, Duration timeout) {
  Node& n = *nodes_[static_cast<size_t>(i)];
  if (n.state != NodeState::kDown) return Status::Ok();
  if (Status s = StartProcess(i); !s.ok()) return s;
  n.state = NodeState::kUp;
  return WaitAnswers(i, timeout);
}

bool NodeCluster::Pause(int i) {
  Node& n = *nodes_[static_cast<size_t>(i)];
  if (n.state != NodeState::kUp) return false;
  n.state = NodeState::kPaused;
  return n.child->Signal(SIGSTOP);
}

bool NodeCluster::Resume(int i) {
  Node& n = *nodes_[static_cast<size_t>(i)];
  if (n.state != NodeState::kPaused) return false;
  n.child->Signal(SIGCONT);
  n.state = NodeState::kUp;
  return true;
}

Status NodeCluster::Demote(int i) {
  if (State(i) != NodeState::kUp) return Status::Unavailable(NodeId(i) + " is not up");
  Result<nlohmann::json> r = client::PostJson(AdminEndpoint(i), "LeaderDemote", nlohmann::json::object(), 2000);
  if (!r.ok()) return r.status();
  if (r->contains("code") && (*r)["code"] != "OK") return Status::Internal(NodeId(i) + " LeaderDemote: " + r->dump());
  return Status::Ok();
}

void NodeCluster::KillAll() {
  for (auto& n : nodes_) {
    n->state = NodeState::kDown;
    if (n->child) n->child->Kill();
  }
}

std::vector<std::string> NodeCluster::LogPaths() const {
  std::vector<std::string> out;
  for (const auto& n : nodes_) out.push_back(n->child->log_path());
  return out;
}

std::vector<std::string> NodeCluster::UnexpectedExits() {
  std::vector<std::string> out;
  for (int i = 0; i < size(); ++i) {
    Node& n = *nodes_[static_cast<size_t>(i)];
    if (n.state != NodeState::kDown && !n.child->Running()) {
      out.push_back(NodeId(i) + " " + n.child->ExitDescription() + " (log: " + n.child->log_path() + ")");
    }
  }
  return out;
}

}  // namespace kvchaos::harness::real
