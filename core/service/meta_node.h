// MetaNode: one metadata node — coordination backend, LeaderElector, NodeRegistry, the persistent
// meta indexer, and the data plane (StorageRegistry + CacheManager) that only the leader serves.
//
//  - OnBecomeLeader(token): builds a fresh StorageRegistry and CacheManager over the indexer,
//    recovers the registry from it (cache entries live in the indexer and are read on demand, so
//    the cache index needs no copy; its size is logged), sets the term's fencing token, then
//    enables the data plane.
//  - OnNoLongerLeader: disables the data plane, waits for in-flight requests, drops that state.
//  - Every data-plane call checks IsLeader() (the elector's lease deadline, not a flag) and that
//    the plane is enabled, and runs with the term's fencing token, so a deposed leader's late
//    writes are rejected by the indexer (StaleFencingToken).
// Threads, time and waits go through kvchaos::Runtime; the HTTP servers are in http_api.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/common/thread_annotations.h"
#include "core/election/coordination_backend.h"
#include "core/election/leader_elector.h"
#include "core/election/node_registry.h"
#include "core/meta/cache_manager.h"
#include "core/meta/meta_indexer.h"
#include "core/meta/storage_registry.h"
#include "core/service/node_config.h"

namespace kvchaos::service {

class HttpApi;

class MetaNode {
 public:
  // `seed` feeds the Rng that generates the node id when the config has none.
  MetaNode(Runtime& runtime, NodeConfig config, uint64_t seed);
  ~MetaNode();  // calls Stop()
  MetaNode(const MetaNode&) = delete;
  MetaNode& operator=(const MetaNode&) = delete;

  // Opens the backend and the indexer, binds both HTTP ports, publishes the node and starts
  // campaigning. On error everything started so far is stopped again.
  Status Start();
  // Stops serving HTTP, resigns (a leader runs its demote path) and leaves the registry. Idempotent.
  void Stop();

  const std::string& node_id() const { return node_id_; }
  int meta_http_port() const { return meta_port_; }
  int admin_http_port() const { return admin_port_; }
  election::LeaderElector& elector() { return *elector_; }
  const NodeConfig& config() const { return config_; }

  // --- admin plane (any node) ---
  // {"self_id","leader_id","leader_endpoint"}; `manager` adds state, lease expiry, fencing token
  // and info time.
  nlohmann::json ClusterInfo(bool manager);
  nlohmann::json Health();
  Result<nlohmann::json> ListNodes();
  Status Demote(std::optional<Duration> forbid_campaign);
  // The current leader's endpoint as JSON, or null when unknown.
  nlohmann::json LeaderEndpointJson();

  // --- data plane (leader only; NotLeader otherwise) ---
  Result<meta::WriteSession> StartWriteCache(std::span<const std::string> keys, const std::string& storage);
  Status FinishWriteCache(const std::string& session_id, std::span<const std::string> keys,
                          std::span<const int64_t> checksums, std::span<const uint8_t> present);
  Result<std::vector<std::optional<meta::CacheLocation>>> GetCacheLocation(std::span<const std::string> keys);
  Status RemoveCache(std::span<const std::string> keys);
  Status AddStorage(const meta::StorageConfig& config);
  Result<meta::StorageConfig> GetStorageConfig(const std::string& name);

 private:
  // What a data-plane call may use while it runs (valid until the matching Leave()).
  struct Plane {
    meta::StorageRegistry* storages = nullptr;
    meta::CacheManager* cache = nullptr;
    uint64_t token = 0;
  };
  class Call;
  Result<Plane> Enter();
  void Leave();
  void OnBecomeLeader(election::FencingToken token);
  void OnNoLongerLeader();

  Runtime& runtime_;
  NodeConfig config_;
  uint64_t seed_;
  std::string node_id_;
  int meta_port_ = 0;
  int admin_port_ = 0;
  std::unique_ptr<election::CoordinationBackend> backend_;
  std::unique_ptr<meta::MetaIndexer> indexer_;
  std::unique_ptr<election::NodeRegistry> registry_;
  std::unique_ptr<election::LeaderElector> elector_;
  std::unique_ptr<HttpApi> http_;

  Mutex mu_;
  CondVar idle_;  // in_flight_ dropped
  bool serving_ GUARDED_BY(mu_) = false;
  int in_flight_ GUARDED_BY(mu_) = 0;
  uint64_t token_ GUARDED_BY(mu_) = 0;
  std::unique_ptr<meta::StorageRegistry> storages_ GUARDED_BY(mu_);
  std::unique_ptr<meta::CacheManager> cache_ GUARDED_BY(mu_);
};

}  // namespace kvchaos::service
