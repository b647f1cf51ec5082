// Shared helpers of the in-process node tests (service and client): a node config with short
// timings on ephemeral ports, a JSON POST to a node's HTTP API, and a wait for leadership.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "core/common/runtime.h"
#include "core/service/node_server.h"
#include "core/service/node_config.h"

namespace kvchaos::service::testing {

// Lease 2 s, loop 20 ms, heartbeats every 100 ms with a 1 s TTL, both ports picked by the kernel.
// An empty `uri` is the single-node memory backend.
inline NodeConfig FastNodeConfig(const std::string& node_id, const std::string& uri = "") {
  NodeConfig c;
  c.coordination_uri = uri;
  c.node_id = node_id;
  c.lease_ms = 2000;
  c.loop_interval_ms = 20;
  c.meta_http_port = 0;
  c.admin_http_port = 0;
  c.heartbeat_interval_ms = 100;
  c.heartbeat_ttl_ms = 1000;
  return c;
}

struct Reply {
  int status = 0;  // 0: no answer (connection failed)
  nlohmann::json body;
};

// POSTs `body` to /api/<call> on 127.0.0.1:<port>.
inline Reply Post(int port, const std::string& call, const std::string& body) {
  httplib::Client client("127.0.0.1", port);
  auto res = client.Post(("/api/" + call).c_str(), body, "application/json");
  if (!res) return {};
  return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
}

inline bool WaitLeader(NodeServer& node) {
  return node.elector().WaitForState(election::ElectorState::kLeader,
                                     Runtime::Real().Now() + std::chrono::seconds(10));
}

}  // namespace kvchaos::service::testing
