// NodeServer: what `kvchaos node` runs — a MetaNode (meta_node.h) served over HTTP (NodeApi through
// HttpApi). Start binds both ports on kvcm.service.listen_host, starts the node with the bound
// ports (so it publishes where it really is) and then serves; Stop stops HTTP first, so no new
// request arrives while the node resigns.
#pragma once

#include <cstdint>
#include <memory>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/service/http_api.h"
#include "core/service/meta_node.h"
#include "core/service/node_api.h"

namespace kvchaos::service {

class NodeServer {
 public:
  NodeServer(Runtime& runtime, NodeConfig config, uint64_t seed, MetaNodeParts parts = {});
  ~NodeServer();  // calls Stop()
  NodeServer(const NodeServer&) = delete;
  NodeServer& operator=(const NodeServer&) = delete;

  // On error everything started so far is stopped again.
  Status Start();
  void Stop();

  MetaNode& node() { return node_; }
  const NodeApi& api() const { return api_; }
  // The HTTP ports (after a successful Start).
  const HttpApi& http() const { return *http_; }
  const std::string& node_id() const { return node_.node_id(); }
  int meta_http_port() const { return node_.meta_http_port(); }
  int admin_http_port() const { return node_.admin_http_port(); }
  election::LeaderElector& elector() { return node_.elector(); }

 private:
  Runtime& runtime_;
  MetaNode node_;
  NodeApi api_;
  std::unique_ptr<HttpApi> http_;
};

}  // namespace kvchaos::service
