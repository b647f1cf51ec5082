// MetaNode: one metadata node — coordination backend, LeaderElector, NodeRegistry, the persistent
// meta indexer, and the data plane (StorageRegistry + CacheManager) that only the leader serves.
// It has no sockets: it serves calls in-process (NodeApi parses requests for it), and whatever
// carries them — NodeServer's HTTP servers (node_server.h), or the simulator's network — tells it
// the ports it is reachable on. So the simulator runs this class unchanged, on virtual time.
//
//  - OnBecomeLeader(token): first fences the term (leader_elector.h, "fencing floor"): reads the
//    indexer's newest token, has the elector raise the term's token above it when the grant is
//    not (a coordination backend restarted empty), and raises the indexer's fence to the term's
//    token, so an older term's writes are refused from then on. Then it builds a fresh
//    StorageRegistry and CacheManager over the indexer,
//    recovers the registry from it (cache entries live in the indexer and are read on demand, so
//    the cache index needs no copy, and nothing scans it: a promotion costs the same with ten
//    entries or ten million), sets the term's fencing token, then
//    enables the data plane. A failed recovery is retried within the term (backoff doubling from
//    loop_interval_ms up to lease_ms / 4, jittered by kvchaos::Rng, waits through the Runtime);
//    the plane stays disabled meanwhile. If the term ends first the retries stop; if recovery has
//    not succeeded within lease_ms the node demotes itself (no campaign for lease_ms) so another
//    node can try, instead of holding the lock while serving nothing.
//  - OnNoLongerLeader: disables the data plane, waits for in-flight requests, drops that state.
//  - Every data-plane call checks IsLeader() (the elector's lease deadline, not a flag) and that
//    the plane is enabled, and runs with the term's fencing token, so a deposed leader's late
//    writes are rejected by the indexer (StaleFencingToken). A write of the *current* term refused
//    that way (a newer token reached the index after the term fenced it: an older term's late
//    fence raise after a coordination wipe) makes the node step down, so the next term fences
//    above the index again instead of a leader that can never write.
//  - The coordination backend is wrapped in a WatchedBackend, so Health() (CheckHealth, see
//    node_health.h) knows when it last answered.
//  - GetClusterInfo names the leader from the lock holder, so leader_id is known even before the
//    leader has published its endpoint (leader_endpoint is then null).
// Threads, time and waits go through kvchaos::Runtime.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
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
#include "core/meta/parsed_entries.h"
#include "core/meta/storage_registry.h"
#include "core/service/advertised_host.h"
#include "core/service/node_config.h"
#include "core/service/watched_backend.h"

namespace kvchaos::service {

// What a node would otherwise build from its config; tests pass scripted or failing ones.
struct MetaNodeParts {
  std::unique_ptr<election::CoordinationBackend> backend;  // null: from kvcm.coordination.uri
  std::unique_ptr<meta::MetaIndexer> indexer;              // null: from kvcm.meta.indexer_uri
  std::optional<HostLookup> host_lookup;                   // nullopt: the system's
  // Told every elector state change (LeaderElectorCallbacks::on_state); null: nobody.
  std::function<void(election::ElectorState, election::FencingToken)> on_elector_state;
};

// Who leads, as this node sees it.
struct LeaderView {
  std::string id;                     // lock holder; "" = nobody (or the backend is unreachable)
  nlohmann::json endpoint = nullptr;  // its published NodeEndpoint; null while unpublished
};

class MetaNode {
 public:
  // `seed` feeds the Rng that generates the node id when the config has none, and the jitter of
  // recovery retries.
  MetaNode(Runtime& runtime, NodeConfig config, uint64_t seed, MetaNodeParts parts = {});
  ~MetaNode();  // calls Stop()
  MetaNode(const MetaNode&) = delete;
  MetaNode& operator=(const MetaNode&) = delete;

  // Opens the backend and the indexer, publishes the node (reachable on the advertised host at
  // these ports, as its transport bound them) and starts campaigning. On error everything started
  // so far is stopped again.
  Status Start(int meta_http_port, int admin_http_port);
  // Resigns (a leader runs its demote path) and leaves the registry. Idempotent. Stop the
  // transport first, so no new call arrives meanwhile.
  void Stop();

  const std::string& node_id() const { return node_id_; }
  int meta_http_port() const { return meta_port_; }
  int admin_http_port() const { return admin_port_; }
  election::LeaderElector& elector() { return *elector_; }
  const NodeConfig& config() const { return config_; }
  // Terms this node became leader in (OnBecomeLeader runs once per term); for /metrics.
  uint64_t terms_led() const { return terms_led_.load(std::memory_order_relaxed); }
  // When the coordination backend last answered (watched_backend.h); nullopt before the first.
  std::optional<MonoTime> coordination_last_answer() { return backend_->last_answer(); }
  // Its calls by name and code, and their durations.
  const MetricsRegistry& coordination_metrics() const { return backend_->metrics(); }
  Runtime& runtime() { return runtime_; }
  // After Start(): the advertised host and the rule that chose it (advertised_host.h).
  const AdvertisedHost& advertised_host() const { return advertised_; }

  // --- admin plane (any node) ---
  // {"self_id","leader_id","leader_endpoint"}; `manager` adds state, lease expiry, fencing token
  // and info time.
  nlohmann::json ClusterInfo(bool manager);
  // CheckHealth's body: "healthy", "checks" (node_health.h), "problems" when unhealthy, plus
  // is_leader / serving / state.
  nlohmann::json Health();
  LeaderView Leader();
  Result<nlohmann::json> ListNodes();
  Status Demote(std::optional<Duration> forbid_campaign);
  // The current leader's endpoint as JSON, or null when unknown.
  nlohmann::json LeaderEndpointJson();

  // --- data plane (leader only; NotLeader otherwise) ---
  Result<meta::WriteSession> StartWriteCache(std::span<const std::string> keys, const std::string& storage,
                                             const std::string& request_id = "");
  Status FinishWriteCache(const std::string& session_id, std::span<const std::string> keys,
                          std::span<const int64_t> checksums, std::span<const uint8_t> present,
                          std::span<const meta::IovLayout> iov_layouts = {}, int64_t inline_header_version = 0);
  // `served_token`, when given, is set to the fencing token of the term that answered.
  Result<std::vector<std::optional<meta::CacheLocation>>> GetCacheLocation(std::span<const std::string> keys,
                                                                           uint64_t* served_token = nullptr);
  Status RemoveCache(std::span<const std::string> keys);
  Status AddStorage(const meta::StorageConfig& config);
  Result<meta::StorageConfig> GetStorageConfig(const std::string& name);
  // Every registered storage, sorted by name.
  Result<std::vector<meta::StorageConfig>> ListStorages();

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
  // One recovery attempt: fence the term (may raise *term_token; *fenced = the token the index's
  // fence was raised to, so a retry does not take its own fence for a zombie's), then recover; on
  // success the term's plane is installed and enabled. Every failure is a recovery failure
  // (retried in-term).
  Status RecoverTerm(election::FencingToken* term_token, election::FencingToken* fenced);
  void OnNoLongerLeader();
  // A data-plane write of the current term refused with StaleFencingToken: a newer token reached
  // the index after this term fenced it (see "fencing floor"); the term steps down (Demote).
  void StepDownIfFencedOut(uint64_t token, const Status& status);
  election::NodeEndpoint SelfEndpoint() const;
  nlohmann::json SelfEndpointJson() const;

  Runtime& runtime_;
  std::atomic<uint64_t> terms_led_{0};
  NodeConfig config_;
  uint64_t seed_;
  MetaNodeParts parts_;
  AdvertisedHost advertised_;
  std::string node_id_;
  int meta_port_ = 0;
  int admin_port_ = 0;
  MonoTime started_at_{};
  std::unique_ptr<WatchedBackend> backend_;
  std::unique_ptr<meta::MetaIndexer> indexer_;
  std::unique_ptr<election::NodeRegistry> registry_;
  std::unique_ptr<election::LeaderElector> elector_;

  // Leader() costs no coordination call in the steady state: a leader names itself; a follower
  // names the holder its elector read within a loop interval, with the endpoint the registry gave
  // within a heartbeat interval, and otherwise a view one loop interval old at most. A follower
  // asked by many clients, or polled over a slow link, would else make two calls per answer.
  LeaderView LookUpLeader();
  Mutex leader_mu_;
  LeaderView leader_view_ GUARDED_BY(leader_mu_);
  std::optional<MonoTime> leader_view_at_ GUARDED_BY(leader_mu_);

  Mutex mu_;
  CondVar idle_;  // in_flight_ dropped
  CondVar wake_;  // stopping_ set (ends a recovery backoff early)
  bool stopping_ GUARDED_BY(mu_) = false;
  bool serving_ GUARDED_BY(mu_) = false;
  // The current promotion's recovery: whether it runs, failed attempts so far and the last error.
  bool recovering_ GUARDED_BY(mu_) = false;
  int recovery_failures_ GUARDED_BY(mu_) = 0;
  std::string recovery_error_ GUARDED_BY(mu_);
  int in_flight_ GUARDED_BY(mu_) = 0;
  uint64_t token_ GUARDED_BY(mu_) = 0;
  // Entries parsed from the index, kept across terms (a pure function of the text: see
  // ParsedEntries); declared before cache_, which refers to it.
  meta::ParsedEntries parsed_entries_;
  std::unique_ptr<meta::StorageRegistry> storages_ GUARDED_BY(mu_);
  std::unique_ptr<meta::CacheManager> cache_ GUARDED_BY(mu_);
};

}  // namespace kvchaos::service
