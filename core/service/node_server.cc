// NodeServer: MetaNode + its HTTP servers (see node_server.h).
#include "core/service/node_server.h"

namespace kvchaos::service {

NodeServer::NodeServer(Runtime& runtime, NodeConfig config, uint64_t seed, MetaNodeParts parts)
    : runtime_(runtime), node_(runtime, std::move(config), seed, std::move(parts)), api_(node_) {}

NodeServer::~NodeServer() { Stop(); }

Status NodeServer::Start() {
  const NodeConfig& c = node_.config();
  http_ = std::make_unique<HttpApi>(runtime_, api_, c.http_worker_threads);
  auto ports = http_->Bind(c.listen_host, c.meta_http_port, c.admin_http_port);
  if (!ports.ok()) {
    http_.reset();
    return ports.status();
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
