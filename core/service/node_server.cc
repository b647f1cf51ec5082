// NodeServer: MetaNode + its HTTP servers (see node_server.h).
#include "core/service/node_server.h"

#include <spdlog/spdlog.h>

namespace kvchaos::service {

NodeServer::NodeServer(Runtime& runtime, NodeConfig config, uint64_t seed, MetaNodeParts parts)
    : runtime_(runtime), node_(runtime, std::move(config), seed, std::move(parts)), api_(node_) {}

NodeServer::~NodeServer() { Stop(); }

Status NodeServer::Start() {
  const NodeConfig& c = node_.config();
  http_ = std::make_unique<HttpApi>(runtime_, api_, c.http_worker_threads, c.http, c.admin_token);
  auto ports = http_->Bind(c.listen_host, c.meta_http_port, c.admin_http_port);
  if (!ports.ok()) {
    http_.reset();
    return ports.status();
  }
  // The admin API can demote the leader: beyond loopback only with a shared secret.
  if (!http_->admin().loopback_only()) {
    if (c.admin_token.empty()) {
      const std::string where = http_->admin().address();
      http_.reset();
      return Status::InvalidConfig("kvcm.service.admin_token: required when the admin API listens beyond loopback "
                                   "(kvcm.service.listen_host '" + c.listen_host + "' binds " + where +
                                   "); set a shared secret of at least " + std::to_string(kMinAdminTokenBytes) +
                                   " characters, or listen on 127.0.0.1");
    }
    spdlog::warn("node '{}': the admin API listens on {}, beyond loopback; every admin request needs the admin token",
                 node_.node_id().empty() ? c.node_id : node_.node_id(), http_->admin().address());
  }
  Status s = node_.Start(ports->first, ports->second);
  if (s.ok()) s = http_->Serve();
  if (!s.ok()) Stop();
  return s;
}

void NodeServer::Stop() {
  if (http_) http_->Stop();
  node_.Stop();
}

}  // namespace kvchaos::service
