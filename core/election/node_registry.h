// NodeRegistry: where a node publishes how to reach it, and how any node finds the leader's
// endpoint and the list of live nodes (ha-leader-election.md 3.2.4, plus its section 9 gaps).
//  - Node info (upstream-compatible): `_TAIR_KVCM_NODE_INFO_<node_id>` = NodeEndpoint JSON, no TTL.
//  - Heartbeat (kvchaos): `_KVCHAOS_NODE_HEARTBEAT_<node_id>` = the same JSON plus the sender's wall
//    time, written every heartbeat interval with a TTL, so a departed node drops out of ListLiveNodes
//    within one TTL even if it never said goodbye; Stop() deletes it at once.
// The heartbeat thread (kvc_heartbeat) runs through kvchaos::Runtime like the elector.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/rng.h"
#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/election/coordination_backend.h"

namespace kvchaos::election {

struct NodeEndpoint {
  std::string node_id;
  std::string host;
  int meta_rpc_port = 0;
  int meta_http_port = 0;
  int admin_rpc_port = 0;
  int admin_http_port = 0;
  friend bool operator==(const NodeEndpoint&, const NodeEndpoint&) = default;
};

// {"node_id":…,"host":…,"meta_rpc_port":…,…} (upstream NodeEndpoint field names), as a JSON value
// and as its text.
nlohmann::json NodeEndpointJson(const NodeEndpoint& endpoint);
std::string NodeEndpointToJson(const NodeEndpoint& endpoint);
// InvalidArgument names `where` and the bad field (missing, wrong type, port out of range).
// Unknown fields are ignored, so newer nodes can add some.
Result<NodeEndpoint> NodeEndpointFromJson(std::string_view json, std::string_view where);

// Upstream format `{host}:{admin_http_port}_{random}`; the random part is 8 hex digits from `rng`.
std::string GenerateNodeId(std::string_view host, int admin_http_port, Rng& rng);

struct LiveNode {
  NodeEndpoint endpoint;
  int64_t heartbeat_wall_ms = 0;  // the sender's wall clock when it wrote the heartbeat
};

class NodeRegistry {
 public:
  // `heartbeat_ttl` must exceed `heartbeat_interval` (checked by Start()).
  NodeRegistry(Runtime& runtime, CoordinationBackend& backend, NodeEndpoint self, Duration heartbeat_interval,
               Duration heartbeat_ttl);
  ~NodeRegistry();  // calls Stop()
  NodeRegistry(const NodeRegistry&) = delete;
  NodeRegistry& operator=(const NodeRegistry&) = delete;

  // Writes the node info and a first heartbeat, then starts kvc_heartbeat. A backend that is down
  // at start is not fatal (the thread keeps trying); bad settings are InvalidConfig.
  Status Start();
  // Stops the thread and deletes this node's heartbeat (the node info stays, as upstream).
  void Stop();

  // One heartbeat now (the thread calls this every interval).
  Status Heartbeat();

  const NodeEndpoint& self() const { return self_; }

  // Live nodes (heartbeat not expired), sorted by node id.
  Result<std::vector<LiveNode>> ListLiveNodes();
  // Published info of `node_id`; NotFound when it never published.
  Result<NodeEndpoint> GetNodeInfo(std::string_view node_id);
  // The endpoint of the lock holder of `lock_key`; nullopt when nobody leads. NotFound when the
  // leader is known but never published its info.
  Result<std::optional<NodeEndpoint>> GetLeaderEndpoint(std::string_view lock_key = kLeaderLockKey);

 private:
  void Loop(bool info_published, MonoTime next);
  // NodeEndpointFromJson of `text`, remembered by text (a pure function of it: a node's info
  // changes only when it restarts, and every follower's leader look-up reads it again).
  Result<NodeEndpoint> ParseInfo(const std::string& text, std::string_view node_id);

  Runtime& runtime_;
  CoordinationBackend& backend_;
  const NodeEndpoint self_;
  const Duration interval_;
  const Duration ttl_;
  Mutex mu_;
  CondVar cv_;
  bool started_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  Thread thread_;
  // A leaf lock (a map lookup, never held across a call or a wait): no scheduling point in the
  // simulator, so traces are those of the code without the cache.
  std::mutex parsed_mu_;
  std::map<std::string, NodeEndpoint> parsed_;  // info text -> endpoint; a few nodes' texts
};

}  // namespace kvchaos::election
