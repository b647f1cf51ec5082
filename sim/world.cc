// One seed's world: builds the runtime, network, Redis, meta index, nodes, clients and observer,
// schedules the faults, runs, shuts everything down cleanly (crashed incarnations included), then
// hands the records to the checkers (sim/checkers.h). World code runs either on the scheduler
// context (faults, message arrivals) or on simulated threads, exactly one at a time, so the
// world's own records need no locks; everything of the product runs unmodified.
#include "sim/world.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

#include "core/client/http_meta_client.h"
#include "core/meta/cache_manager.h"
#include "core/meta/storage_registry.h"
#include "core/service/wire_format.h"
#include "sim/read_routing_meta_client.h"
#include "sim/recording_meta_client.h"
#include "core/client/transfer_client.h"
#include "core/election/coordination_etcd_backend.h"
#include "core/election/leader_elector.h"
#include "core/store/posix_store.h"
#include "core/service/meta_node.h"
#include "core/service/node_api.h"
#include "sim/checkers.h"
#include "sim/data_workload.h"
#include "sim/meta_swap.h"
#include "sim/sim_coordination_client.h"
#include "sim/sim_disk.h"
#include "sim/sim_etcd.h"
#include "sim/sim_etcd_transport.h"
#include "sim/sim_etcd_truth.h"
#include "sim/sim_node_api.h"
#include "sim/sim_redis.h"
#include "sim/sim_runtime.h"
#include "sim/sim_sentinel.h"

namespace kvchaos::sim {
namespace {

constexpr int64_t kMsNs = 1'000'000;
constexpr int64_t kSecNs = 1'000'000'000;
constexpr const char* kStorageName = "sim";            // the data plane's (meta checksums on)
constexpr const char* kMetaOnlyStorageName = "sim-meta";  // the meta clients' (no store behind it)
constexpr const char* kProbeKey = "__kvchaos_probe";
constexpr int kProbeAllEvery = 10;
constexpr int64_t kProbeTimeoutMs = 150;
// PlantedBug::kFollowerCachedReads: how old a node's copy of the map may get before it takes another.
constexpr int64_t kMapCopyRefreshNs = 2'000 * kMsNs;

// Write calls of the meta port: the ones whose acceptance makes a node "acting".
bool IsWriteCall(const std::string& call) {
  return call == "StartWriteCache" || call == "FinishWriteCache" || call == "RemoveCache" || call == "AddStorage";
}

// An answer from past the node's leader gate: anything but NotLeader (a NotFound storage or a
// refused stale token still means the node served the call as leader).
bool PassedGate(const service::ApiReply& answer) { return answer.http_status != 0 && answer.http_status != 421; }

class World {
 public:
  explicit World(const SimConfig& config);
  ~World();
  SimResult Run();

 private:
  struct Incarnation {
    int node = 0;
    int number = 0;
    SimCoordinationClient* coordination = nullptr;  // owned by `meta` (Redis)
    SimEtcdTransport* etcd = nullptr;               // owned by `meta`'s backend (etcd)
    SimMetaIndexClient* index = nullptr;            // owned by `meta`
    std::unique_ptr<service::MetaNode> meta;
    std::unique_ptr<service::NodeApi> api;
    std::unique_ptr<SimApiServer> server;
    Thread starter;
    bool started = false;  // MetaNode::Start returned OK and the API serves
    bool stop = false;
    bool crashed = false;
    election::ElectorState state = election::ElectorState::kFollower;  // as the elector last told
    int acting = -1;     // index of the open acting interval
    int believing = -1;  // index of the open believing interval
    // PlantedBug::kAckBeforeIndex: commits acknowledged but not yet sent to the index.
    uint64_t finish_calls = 0;
    std::vector<nlohmann::json> late_commits;
    bool committing_late = false;
    // PlantedBug::kDeposedLeaderReads: the locations this node answered while leading (null: none),
    // the token of its last term, and when that term ended (true time; -1: leading or never led).
    std::map<std::string, nlohmann::json> led_answers;
    uint64_t led_token = 0;
    TrueNs led_until = -1;
    // PlantedBug::kFollowerCachedReads: its copy of the map (key -> location JSON), the newest
    // token the index had then, and when it was taken (-1: never).
    std::map<std::string, nlohmann::json> map_copy;
    uint64_t map_copy_token = 0;
    TrueNs map_copy_at = -1;
  };
  struct Client {
    int host = 0;
    std::unique_ptr<SimNodeTransport> transport;
    std::unique_ptr<client::HttpMetaClient> meta;
    Rng rng{0};
    Thread thread;
  };
  // The data plane's client process: the production store and TransferClient over the disk.
  struct DataClient {
    int host = 0;
    std::unique_ptr<SimNodeTransport> transport;
    std::unique_ptr<client::HttpMetaClient> meta;
    std::unique_ptr<client::HttpMetaClient> reads;     // SimDataPlane::sticky_reads: the reads' own
    std::unique_ptr<ReadRoutingMetaClient> routing;    // `meta` for writes, `reads` for reads
    std::unique_ptr<HistoryRecorder> history;          // every call of `recording`, on true time
    std::unique_ptr<RecordingMetaClient> recording;    // over `routing` or `meta`: what the TransferClient calls
    std::unique_ptr<SimFileOps> files;
    std::unique_ptr<SimAioOps> aio;
    std::unique_ptr<store::PosixStore> store;
    std::unique_ptr<client::TransferClient> transfer;
    std::unique_ptr<DataWorkload> load;
    Thread thread;  // sets up, then runs the workload until the run ends
  };

  void StartNode(int node);
  service::NodeConfig NodeConfigFor(int node) const;
  service::ApiReply Serve(Incarnation& inc, service::ApiPort port, const std::string& call, nlohmann::json body);
  // GetCacheLocation under a read planted bug: the production answer, or the bug's answer where
  // the node refused (NotLeader) and the bug answers instead.
  service::ApiReply ServeReadWithBug(Incarnation& inc, nlohmann::json body);
  // PlantedBug::kFollowerCachedReads: takes a new copy of the map when the node's is too old.
  void RefreshMapCopy(Incarnation& inc);
  void OnElectorState(Incarnation& inc, election::ElectorState state, uint64_t token);
  void Deliver(int host, ApiCall call);
  int HostOf(std::string_view name) const;
  std::vector<std::string> Bootstrap() const;
  void StartClients();
  void ClientLoop(Client& c, int index);
  void ProbeLoop(int node);
  void StartDataPlane();
  void DataPlaneMain();
  // Stops the workload and reads every acknowledged block back, while the cluster still runs.
  void FinishDataPlane(SimResult& result);
  void SetStoreRule(const SimStoreRule& rule, bool installed);
  // meta-swap (sim/meta_swap.h): two committed cache entries exchange their records until `end`,
  // when they are swapped back unless one of them changed meanwhile.
  void SwapMetaRecords(TrueNs end);
  // The faultfs rule of a generated kStoreFault (variant: EIO, hang, latency, read bit flip).
  SimStoreRule GeneratedStoreRule(const FaultAction& f) const;
  uint64_t MountCalls(const std::string& mount) const;
  // Checks of the data plane against what the run did to the disk.
  void CheckDataPlane(SimResult& result);
  // Checks the data plane's meta history (and writes it to config_.history_path when set).
  void CheckRecordedHistory(SimResult& result);
  void RecordActing(Incarnation& inc, uint64_t token, TrueNs at, TrueNs deadline_true);
  void CloseActing(Incarnation& inc, TrueNs observed_false);
  void CloseBelieving(Incarnation& inc, TrueNs at);
  void Kill(Incarnation& inc);
  void ApplyFault(const FaultAction& fault);
  void SetBackendReachable(int node, bool to, bool from, bool reachable);
  // Cuts (or heals) the node's links to `peers`, requests (`to`) and/or replies (`from`).
  // The hosts a node's links to `peers` go to: the coordination host, every host that calls its
  // API (the other nodes, clients, the observer), or all.
  std::vector<int> PeerHosts(int node, PartitionPeers peers) const;
  void SetPeersReachable(int node, PartitionPeers peers, bool to, bool from, bool reachable);
  // redis-sentinel's coordination-failover: cut replication for `f.duration_ns` (if any), then
  // kill the primary; the record spans the death to the promotion.
  void FailOverCoordination(const FaultAction& f);
  // The coordination server clients reach now (the promoted replica after a failover).
  SimRedis& Coordination() { return sentinel_ ? sentinel_->primary() : *redis_; }
  int CoordinationHost() { return Coordination().host(); }
  // Whether the world may restart a coordination server that is down (not a failed-over primary).
  bool MayRestartCoordination() const { return !sentinel_ || !sentinel_->failed_over(); }
  // The hosts a node reaches coordination at: the Redis clients send to now, or every etcd member
  // (`member` >= 0: that one).
  std::vector<int> CoordinationHosts(int member = -1);
  bool IsCoordinationHost(int host) const;
  // The hosts whose clocks the backend's clock faults move (every etcd member).
  std::vector<int> BackendClockHosts() const;
  // Ground truth of the lock, from whichever backend runs.
  const CoordinationTruth& Truth() const { return etcd_truth_ ? etcd_truth_->truth() : *redis_->truth(); }
  bool HeldWith(int host, uint64_t token);
  election::EtcdEndpoints EtcdEndpointsOf() const;
  // coordination-outage of etcd members: crash or pause one (`member`), or every one (variants: fault_schedule.h).
  void EtcdOutage(const FaultAction& f, TrueNs end);
  // partition with kEtcdPeers: one member cut from the other members for the fault's duration.
  void CutEtcdPeers(const FaultAction& f);
  // Every etcd member up and running and every raft link healed (quiet phase, teardown).
  void HealEtcd();
  void StartQuiet();
  int LeaderNode() const;
  int Resolve(const FaultAction& fault) const;
  void Teardown(SimResult& result);
  void Note(int node, std::string_view what, int64_t a = 0, int64_t b = 0, std::string_view detail = {});

  SimConfig config_;
  // Declared first so it is destroyed last: everything below uses it.
  std::unique_ptr<SimRuntime> runtime_;
  int redis_host_ = 0;
  int replica_host_ = -1;  // redis-sentinel only
  int index_host_ = 0;
  int observer_host_ = 0;
  Rng world_rng_;
  std::unique_ptr<SimNetwork> network_;
  std::unique_ptr<SimRedis> redis_;
  std::unique_ptr<SimRedis> replica_;      // redis-sentinel only
  std::unique_ptr<SimSentinel> sentinel_;  // redis-sentinel only
  std::vector<int> etcd_hosts_;            // etcd only: one host per member
  std::unique_ptr<SimEtcd> etcd_;
  std::unique_ptr<SimEtcdLockTruth> etcd_truth_;
  std::vector<int> etcd_pauses_;           // per member: pause faults in effect
  std::vector<int> etcd_crashes_;          // per member: crash faults in effect
  std::vector<std::vector<int>> etcd_cuts_;  // per pair of members: peer cuts in effect
  std::unique_ptr<SimMetaIndex> index_;
  // PlantedBug::kFollowerCachedReads: reads the index directly to take the nodes' copies of the map.
  std::unique_ptr<meta::StorageRegistry> copy_registry_;
  std::unique_ptr<meta::CacheManager> copy_reader_;
  std::vector<std::unique_ptr<Incarnation>> incarnations_;
  std::vector<Incarnation*> current_;  // per node; null while crashed or stopped
  std::vector<int> pauses_;            // per node: pause faults in effect
  int backend_outages_ = 0;            // unreachable-backend faults in effect
  int64_t backend_drift_ppm_ = 0;
  bool backend_slewing_ = false;
  int64_t quiet_start_ns_ = 0;
  bool finished_ = false;
  bool leak_on_exit_ = false;
  Records records_;
  uint64_t writes_acting_ = 0;
  uint64_t client_ops_ = 0;
  uint64_t client_errors_ = 0;
  std::string data_plane_error_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::unique_ptr<SimDisk> disk_;
  std::unique_ptr<DataClient> data_;
  // Each store rule the run installed, when, and the calls its mounts saw meanwhile.
  struct StoreWindow {
    SimStoreRule rule;
    TrueNs start = 0;
    TrueNs end = 0;
    uint64_t calls = 0;  // at the start: the mounts' count so far; at the end: the calls during it
  };
  std::vector<StoreWindow> store_windows_;
  uint64_t store_faults_ = 0;
  uint64_t power_losses_ = 0;
  uint64_t meta_swaps_ = 0;  // pairs of index records exchanged (meta-swap)
  std::set<std::string> swapped_keys_;  // keys swapped now: a later swap leaves them alone
  std::vector<store::HealthTransition> transitions_;  // the store's, kept when it goes
  std::unique_ptr<SimNodeTransport> observer_transport_;
  std::vector<Thread> probes_;
  std::vector<Thread> admin_threads_;  // scenario demotes and graceful stops, joined at teardown
};

World::World(const SimConfig& config) : config_(config), world_rng_(Rng(config.seed).Split("world")) {
  SimRuntimeOptions options;
  options.seed = config.seed;
  options.buggify = config.buggify;
  options.checkpoint_every = config.checkpoint_every;
  // Shutting a node down takes a few loop intervals and RPC timeouts; a stop that takes minutes
  // of virtual time is a hang, reported with the thread report.
  options.driver_join_budget_ns = (4 * config.lease_ms + 60'000) * kMsNs;
  runtime_ = std::make_unique<SimRuntime>(options);
  if (config.trace_sink) runtime_->trace().SetSink(config.trace_sink);
  if (config.capture_end > config.capture_begin) runtime_->trace().CaptureWindow(config.capture_begin, config.capture_end);
  Rng clocks = Rng(config.seed).Split("clocks");
  // With clock faults on, every clock of the run is a bad one (drift within fault_drift_ppm);
  // otherwise within max_drift_ppm (an ordinary crystal).
  const int64_t drift = (config.faults & FaultBit(FaultKind::kClock)) ? config.fault_drift_ppm : config.max_drift_ppm;
  // Each draw is a statement of its own: the arguments of one call are evaluated in an order
  // each compiler picks, and a seed must give the same clocks under gcc and clang.
  // The draws stay in sight, not in a helper, so sim/check_draw_order.py can see them.
  // Hosts boot at different times within the first hour; wall clocks start near a fixed epoch.
  constexpr int64_t kLastBootS = 3600;
  constexpr int64_t kEpochWallNs = 1'700'000'000'000'000'000LL;
  for (int i = 0; i < config.nodes; ++i) {
    const int64_t boot_ns = clocks.UniformInt(1, kLastBootS) * kSecNs;
    const int64_t drift_ppm = clocks.UniformInt(-drift, drift);
    const int64_t wall_ns = kEpochWallNs + clocks.UniformInt(-500, 500) * kMsNs;
    runtime_->AddNode("n" + std::to_string(i + 1), SimClock(Duration(boot_ns), drift_ppm, Duration(wall_ns)));
  }
  backend_drift_ppm_ = clocks.UniformInt(-drift, drift);
  const int64_t redis_boot_ns = clocks.UniformInt(1, kLastBootS) * kSecNs;
  redis_host_ = runtime_->AddNode("redis", SimClock(Duration(redis_boot_ns), backend_drift_ppm_,
                                                    Duration(kEpochWallNs)));
  const int64_t index_boot_ns = clocks.UniformInt(1, kLastBootS) * kSecNs;
  index_host_ = runtime_->AddNode("meta-index", SimClock(Duration(index_boot_ns), clocks.UniformInt(-drift, drift),
                                                         Duration(kEpochWallNs)));
  observer_host_ = runtime_->AddNode("observer");
  if (config.coordination == SimCoordination::kRedisSentinel) {
    // Added last, so a world without it numbers its hosts and draws its clocks as before.
    // Booted at another time, but its wall clock NTP-synced with the primary's within +-5 ms
    // (wall = monotonic + offset): replicated expiries are absolute wall times.
    const int64_t boot_ns = clocks.UniformInt(1, kLastBootS) * kSecNs;
    const int64_t drift_ppm = clocks.UniformInt(-drift, drift);
    const int64_t wall_ns = redis_boot_ns + kEpochWallNs - boot_ns + clocks.UniformInt(-5, 5) * kMsNs;
    replica_host_ = runtime_->AddNode("redis-replica", SimClock(Duration(boot_ns), drift_ppm, Duration(wall_ns)));
  }
  if (config.coordination == SimCoordination::kEtcd) {
    // Added last, so other worlds number their hosts and draw their clocks as before.
    for (int m = 0; m < kSimEtcdMembers; ++m) {
      // Drift first: the order a gcc build drew them in when both were arguments of one call,
      // so the seeds of etcd worlds replay as they did.
      const int64_t drift_ppm = clocks.UniformInt(-drift, drift);
      const int64_t boot_ns = clocks.UniformInt(1, kLastBootS) * kSecNs;
      etcd_hosts_.push_back(runtime_->AddNode("etcd" + std::to_string(m + 1), SimClock(Duration(boot_ns), drift_ppm,
                                                                                      Duration(kEpochWallNs))));
    }
  }
  network_ = std::make_unique<SimNetwork>(*runtime_, Rng(config.seed).Split("network"));
  redis_ = std::make_unique<SimRedis>(*runtime_, redis_host_);
  if (config.coordination == SimCoordination::kRedisSentinel) {
    replica_ = std::make_unique<SimRedis>(*runtime_, replica_host_, redis_->truth());
    sentinel_ = std::make_unique<SimSentinel>(*runtime_, *redis_, *replica_, Rng(config.seed).Split("sentinel"),
                                              config.sentinel);
  }
  if (config.coordination == SimCoordination::kEtcd) {
    etcd_ = std::make_unique<SimEtcd>(*runtime_, etcd_hosts_, Rng(config.seed).Split("etcd"), config.etcd);
    etcd_pauses_.assign(etcd_hosts_.size(), 0);
    etcd_crashes_.assign(etcd_hosts_.size(), 0);
    etcd_cuts_.assign(etcd_hosts_.size(), std::vector<int>(etcd_hosts_.size(), 0));
    // The key names are the production backend's own.
    const election::CoordinationEtcdBackend keys(
        *runtime_, EtcdEndpointsOf(), std::make_unique<SimEtcdTransport>(*runtime_, *network_, *etcd_, observer_host_));
    etcd_truth_ = std::make_unique<SimEtcdLockTruth>(*runtime_, *etcd_, keys.LockKey(""), keys.FenceKey(""));
  }
  index_ = std::make_unique<SimMetaIndex>(
      *runtime_, index_host_, [this](int host, uint64_t token) { return HeldWith(host, token); },
      meta::LocalMetaIndexer::TestingKnobs{.skip_fence_check = config.bug == PlantedBug::kFenceOff});
  if (config.bug == PlantedBug::kFollowerCachedReads) {
    copy_registry_ = std::make_unique<meta::StorageRegistry>(index_->indexer());
    copy_reader_ = std::make_unique<meta::CacheManager>(index_->indexer(), *copy_registry_, *runtime_);
  }
  if (config.data.on()) {
    disk_ = std::make_unique<SimDisk>(*runtime_, Rng(config.seed).Split("disk"));
    SimStorage& shared = disk_->AddStorage("share");
    for (const std::string& path : config.data.paths) disk_->AddMount("/sim/" + path, shared);
  }
  current_.assign(static_cast<size_t>(config.nodes), nullptr);
  pauses_.assign(static_cast<size_t>(config.nodes), 0);
  records_.nodes = config.nodes;
}

World::~World() {
  if (leak_on_exit_) {
    // A node that could not be shut down still has threads on these objects; the runtime's
    // destructor unwinds them, so the objects must stay (a bug report, not a normal exit).
    for (auto& inc : incarnations_) {
      (void)inc->server.release();
      (void)inc->api.release();
      (void)inc->meta.release();
    }
    for (auto& c : clients_) {
      (void)c->meta.release();
      (void)c->transport.release();
    }
    if (data_) (void)data_.release();
  }
}

void World::Note(int node, std::string_view what, int64_t a, int64_t b, std::string_view detail) {
  runtime_->trace().Event(runtime_->true_now(), node, 0, what, a, b, detail);
}

int World::HostOf(std::string_view name) const {
  for (int n = 0; n < config_.nodes; ++n) {
    if (runtime_->node_name(n) == name) return n;
  }
  return -1;
}

std::vector<std::string> World::Bootstrap() const {
  std::vector<std::string> out;
  for (int n = 0; n < config_.nodes; ++n) out.push_back(runtime_->node_name(n) + ":" + std::to_string(kSimMetaPort));
  return out;
}

service::NodeConfig World::NodeConfigFor(int node) const {
  service::NodeConfig c;
  c.node_id = runtime_->node_name(node);
  c.advertised_host = c.node_id;
  c.lease_ms = config_.lease_ms;
  c.loop_interval_ms = config_.loop_ms;
  c.safety_margin_ms = config_.safety_margin_ms;
  c.forbid_campaign_time_ms = config_.forbid_campaign_ms;
  c.heartbeat_interval_ms = std::max<int64_t>(config_.loop_ms, 1000);
  c.heartbeat_ttl_ms = 5 * c.heartbeat_interval_ms;
  c.http_worker_threads = 4;
  c.testing.elector.no_safety_margin = config_.bug == PlantedBug::kNoSafetyMargin;
  c.testing.elector.lease_from_response = config_.bug == PlantedBug::kLeaseFromResponse;
  c.testing.elector.serve_while_demoting = config_.bug == PlantedBug::kServeWhileDemoting;
  c.testing.skip_recovery_fence = config_.bug == PlantedBug::kRecoverySkipsFence;
  return c;
}

void World::StartNode(int node) {
  auto inc = std::make_unique<Incarnation>();
  Incarnation* p = inc.get();
  p->node = node;
  p->number = 1 + static_cast<int>(std::count_if(incarnations_.begin(), incarnations_.end(),
                                                 [&](const auto& other) { return other->node == node; }));
  service::MetaNodeParts parts;
  const SimClientOptions client_options{config_.backend_timeout_ms, config_.backend_retries};
  auto index = std::make_unique<SimMetaIndexClient>(*runtime_, *network_, *index_, node);
  p->index = index.get();
  if (etcd_) {
    // The production etcd backend and gateway, over the simulated network.
    auto transport = std::make_unique<SimEtcdTransport>(*runtime_, *network_, *etcd_, node);
    p->etcd = transport.get();
    parts.backend = std::make_unique<election::CoordinationEtcdBackend>(*runtime_, EtcdEndpointsOf(), std::move(transport));
  } else {
    auto coordination = sentinel_ ? std::make_unique<SimCoordinationClient>(*runtime_, *network_, *sentinel_, node, client_options)
                                  : std::make_unique<SimCoordinationClient>(*runtime_, *network_, *redis_, node, client_options);
    p->coordination = coordination.get();
    parts.backend = std::move(coordination);
  }
  parts.indexer = std::move(index);
  parts.on_elector_state = [this, p](election::ElectorState state, election::FencingToken token) {
    OnElectorState(*p, state, token);
  };
  service::NodeConfig node_config = NodeConfigFor(node);
  const uint64_t seed = Rng(config_.seed).Split("node").Split(static_cast<uint64_t>(node * 1000 + p->number)).NextU64();
  p->meta = std::make_unique<service::MetaNode>(*runtime_, node_config, seed, std::move(parts));
  p->api = std::make_unique<service::NodeApi>(*p->meta);
  p->server = std::make_unique<SimApiServer>(
      *runtime_, node, node_config.http_worker_threads,
      [this, p](service::ApiPort port, const std::string& call, nlohmann::json body) {
        return Serve(*p, port, call, std::move(body));
      });
  incarnations_.push_back(std::move(inc));
  current_[static_cast<size_t>(node)] = p;
  Note(node, "node-start", p->number);
  p->starter = runtime_->SpawnOn(node, "sim_start", [this, p] {
    Status s = p->meta->Start(kSimMetaPort, kSimAdminPort);
    if (!s.ok()) throw std::runtime_error("node " + runtime_->node_name(p->node) + " did not start: " + s.ToString());
    if (p->stop || p->crashed) return;
    p->server->Start();
    p->started = true;
  });
}

void World::OnElectorState(Incarnation& inc, election::ElectorState state, uint64_t token) {
  inc.state = state;
  const TrueNs now = runtime_->true_now();
  if (state == election::ElectorState::kLeader) {
    inc.led_token = token;
    inc.led_until = -1;
    CloseBelieving(inc, now);
    records_.believing.push_back(Interval{inc.node, token, now, now, -1});
    inc.believing = static_cast<int>(records_.believing.size()) - 1;
  } else if (state != election::ElectorState::kPromoting) {
    // The term is over (DEMOTING, FOLLOWER): the gate is closed; a call it still accepts after
    // this reopens an acting interval (what a gate that serves while demoting would do).
    if (inc.led_token != 0 && inc.led_until < 0) inc.led_until = now;
    CloseBelieving(inc, now);
    CloseActing(inc, now);
  }
}

void World::RefreshMapCopy(Incarnation& inc) {
  const TrueNs now = runtime_->true_now();
  if (inc.map_copy_at >= 0 && now - inc.map_copy_at < kMapCopyRefreshNs) return;
  // Read on this thread straight from the in-memory index (no network, no wait): a snapshot.
  meta::MetaIndexer& index = index_->indexer();
  Result<std::vector<std::string>> listed = index.ListKeys(meta::CacheManager::kKeyPrefix);
  Result<uint64_t> newest = index.NewestFencingToken();
  if (!listed.ok() || !newest.ok()) return;  // keeps the old copy
  std::vector<std::string> keys;
  for (const std::string& k : *listed) keys.push_back(k.substr(meta::CacheManager::kKeyPrefix.size()));
  Result<std::vector<std::optional<meta::CacheLocation>>> locations = copy_reader_->GetCacheLocation(keys);
  if (!locations.ok()) return;
  inc.map_copy.clear();
  for (size_t i = 0; i < keys.size(); ++i) {
    if ((*locations)[i]) inc.map_copy[keys[i]] = (*locations)[i]->ToJson();
  }
  inc.map_copy_token = *newest;
  inc.map_copy_at = now;
  Note(inc.node, "map-copy", static_cast<int64_t>(inc.map_copy.size()), static_cast<int64_t>(*newest));
}

service::ApiReply World::ServeReadWithBug(Incarnation& inc, nlohmann::json body) {
  const nlohmann::json request = body;
  service::ApiReply answer = inc.api->HandleValue(service::ApiPort::kMeta, "GetCacheLocation", std::move(body));
  const TrueNs now = runtime_->true_now();
  if (answer.http_status == 200) {
    if (config_.bug == PlantedBug::kDeposedLeaderReads) {
      // Remembers what it answered while leading: the map it will answer from once deposed.
      const nlohmann::json& keys = request.at("keys");
      const nlohmann::json& locations = answer.body.at("locations");
      for (size_t i = 0; i < keys.size() && i < locations.size(); ++i) inc.led_answers[keys[i].get<std::string>()] = locations[i];
    }
    return answer;
  }
  if (answer.http_status != 421) return answer;  // only a refusal for not leading is answered instead
  // The request parsed (NotLeader comes after the parse): "keys" is an array of strings.
  const nlohmann::json& keys = request.at("keys");
  auto answer_from = [&](const std::map<std::string, nlohmann::json>& map, uint64_t token) {
    nlohmann::json locations = nlohmann::json::array();
    for (const nlohmann::json& k : keys) {
      auto it = map.find(k.get<std::string>());
      locations.push_back(it == map.end() ? nlohmann::json(nullptr) : it->second);
    }
    Note(inc.node, "planted-read", static_cast<int64_t>(keys.size()), static_cast<int64_t>(token));
    nlohmann::json out = service::wire::LocationsAnswerToJson(std::move(locations), runtime_->node_name(inc.node), token);
    out["code"] = "OK";
    return service::ApiReply{200, std::move(out)};
  };
  if (config_.bug == PlantedBug::kDeposedLeaderReads) {
    const bool deposed_lately = inc.led_until >= 0 && now - inc.led_until <= config_.lease_ms * kMsNs;
    if (deposed_lately) return answer_from(inc.led_answers, inc.led_token);
    return answer;
  }
  RefreshMapCopy(inc);
  if (inc.map_copy_at < 0) return answer;  // no copy yet
  return answer_from(inc.map_copy, inc.map_copy_token);
}

service::ApiReply World::Serve(Incarnation& inc, service::ApiPort port, const std::string& call,
                               nlohmann::json body) {
  if (config_.bug == PlantedBug::kAckBeforeIndex && port == service::ApiPort::kMeta && !inc.committing_late) {
    // Planted: the commit is acknowledged before the index has it; it lands after the next call.
    if (call == "FinishWriteCache" && ++inc.finish_calls % 10 == 0) {
      inc.late_commits.push_back(std::move(body));
      return service::ApiReply{200, {{"code", "OK"}}};
    }
    if (!inc.late_commits.empty()) {
      inc.committing_late = true;
      service::ApiReply answer = Serve(inc, port, call, std::move(body));
      for (nlohmann::json& late : std::exchange(inc.late_commits, {})) {
        (void)Serve(inc, port, "FinishWriteCache", std::move(late));
      }
      inc.committing_late = false;
      return answer;
    }
  }
  const bool read_bug = config_.bug == PlantedBug::kDeposedLeaderReads || config_.bug == PlantedBug::kFollowerCachedReads;
  if (read_bug && port == service::ApiPort::kMeta && call == "GetCacheLocation") return ServeReadWithBug(inc, std::move(body));
  const bool write = port == service::ApiPort::kMeta && IsWriteCall(call);
  if (!write) return inc.api->HandleValue(port, call, std::move(body));
  // The gate is passed (or not) at the start of the call: its snapshot has the term and lease a
  // write that passes it acts under, even if the node is paused before it answers.
  const TrueNs at = runtime_->true_now();
  const election::LeadershipSnapshot before = inc.meta->elector().Snapshot();
  service::ApiReply answer = inc.api->HandleValue(port, call, std::move(body));
  if (PassedGate(answer)) {
    ++writes_acting_;
    const TrueNs deadline_true =
        before.lease_deadline ? runtime_->clock(inc.node).TrueWhenMonoReaches(*before.lease_deadline, 0) : -1;
    RecordActing(inc, before.token, at, deadline_true);
  } else {
    CloseActing(inc, at);
  }
  return answer;
}

void World::Deliver(int host, ApiCall call) {
  Incarnation* inc = host >= 0 && host < config_.nodes ? current_[static_cast<size_t>(host)] : nullptr;
  if (inc == nullptr || !inc->started) {
    call.respond(service::ApiReply{0, {}});  // nobody listens: connection refused
    return;
  }
  inc->server->Arrive(std::move(call));
}

void World::RecordActing(Incarnation& inc, uint64_t token, TrueNs at, TrueNs deadline_true) {
  if (inc.acting >= 0 && records_.acting[static_cast<size_t>(inc.acting)].token != token) CloseActing(inc, at);
  if (inc.acting < 0) {
    records_.acting.push_back(Interval{inc.node, token, at, at, deadline_true});
    inc.acting = static_cast<int>(records_.acting.size()) - 1;
    Note(inc.node, "acting-start", static_cast<int64_t>(token));
  }
  Interval& interval = records_.acting[static_cast<size_t>(inc.acting)];
  interval.last_true = std::max(interval.last_true, at);
  interval.deadline_true = std::max(interval.deadline_true, deadline_true);
}

void World::CloseActing(Incarnation& inc, TrueNs observed_false) {
  if (inc.acting < 0) return;
  Interval& interval = records_.acting[static_cast<size_t>(inc.acting)];
  // Acting ended somewhere in (last_true, observed_false]; the lease deadline bounds it when the
  // elector honours it, and a later accepted call proves it did not.
  TrueNs end = observed_false;
  if (interval.deadline_true >= 0) end = std::min(end, interval.deadline_true);
  interval.end = std::max(interval.last_true, end);
  Note(inc.node, "acting-end", static_cast<int64_t>(interval.token), interval.end);
  inc.acting = -1;
}

void World::CloseBelieving(Incarnation& inc, TrueNs at) {
  if (inc.believing < 0) return;
  records_.believing[static_cast<size_t>(inc.believing)].end = at;
  inc.believing = -1;
}

void World::StartClients() {
  for (int i = 0; i < config_.clients; ++i) {
    auto c = std::make_unique<Client>();
    c->host = runtime_->AddNode("c" + std::to_string(i + 1));
    c->rng = Rng(config_.seed).Split("client").Split(static_cast<uint64_t>(i));
    c->transport = std::make_unique<SimNodeTransport>(
        *runtime_, *network_, c->host, [this](std::string_view name) { return HostOf(name); },
        [this](int host, ApiCall call) { Deliver(host, std::move(call)); });
    client::LeaderDiscoveryOptions discovery;
    discovery.bootstrap = Bootstrap();
    discovery.request_timeout_ms = std::max<int64_t>(200, config_.lease_ms / 4);
    discovery.backoff_seed = c->rng.NextU64();
    c->meta = std::make_unique<client::HttpMetaClient>(*runtime_, discovery, *c->transport);
    Client* p = c.get();
    clients_.push_back(std::move(c));
    p->thread = runtime_->SpawnOn(p->host, "sim_client", [this, p, i] { ClientLoop(*p, i); });
  }
}

void World::ClientLoop(Client& c, int index) {
  const Duration interval = Millis(config_.client_interval_ms);
  // The first client registers the storage once a leader serves (as real mode's workload does).
  if (index == 0) {
    meta::StorageConfig storage;
    storage.type = "posix";
    storage.global_unique_name = kMetaOnlyStorageName;
    while (!finished_ && !c.meta->AddStorage(storage).ok()) runtime_->SleepFor(interval);
  }
  while (!finished_) {
    runtime_->SleepFor(interval * config_.clients);
    if (finished_) break;
    const std::string key = "k" + std::to_string(c.rng.UniformInt(0, 255));
    ++client_ops_;
    auto session = c.meta->StartWrite(std::span(&key, 1), kMetaOnlyStorageName);
    if (!session.ok()) {
      ++client_errors_;
      continue;
    }
    if (session->to_write.empty() || session->to_write[0] == 0) continue;  // already cached
    ++client_ops_;
    if (!c.meta->FinishWrite(session->session_id, std::span(&key, 1), {}, {}).ok()) ++client_errors_;
  }
}

void World::ProbeLoop(int node) {
  // A probe write to the node's meta port, as real mode's observer sends one: to a node that says
  // it leads every round, to every node every kProbeAllEvery-th round (a node may serve without
  // believing it leads). Its acceptance is recorded where the node serves it (Serve).
  const std::string endpoint = runtime_->node_name(node) + ":" + std::to_string(kSimMetaPort);
  // RemoveCache of the reserved key: a fenced write (an index Delete with the term's token) behind
  // the same leader gate as every data-plane call, with the smallest request and answer.
  const nlohmann::json body = {{"keys", {kProbeKey}}};
  for (int round = 0; !finished_; ++round) {
    runtime_->SleepFor(Millis(config_.write_interval_ms));
    const Incarnation* inc = current_[static_cast<size_t>(node)];
    if (inc == nullptr || !inc->started) continue;
    const bool claims = inc->state == election::ElectorState::kLeader || inc->state == election::ElectorState::kPromoting;
    if (!claims && round % kProbeAllEvery != 0) continue;
    (void)observer_transport_->Call(endpoint, "RemoveCache", body, kProbeTimeoutMs);
  }
}

void World::StartDataPlane() {
  data_ = std::make_unique<DataClient>();
  DataClient& d = *data_;
  d.host = runtime_->AddNode("store-client");
  d.transport = std::make_unique<SimNodeTransport>(
      *runtime_, *network_, d.host, [this](std::string_view name) { return HostOf(name); },
      [this](int host, ApiCall call) { Deliver(host, std::move(call)); });
  client::LeaderDiscoveryOptions discovery;
  discovery.bootstrap = Bootstrap();
  discovery.max_attempts = 8;
  discovery.max_backoff_ms = 400;
  discovery.request_timeout_ms = 1000;
  discovery.backoff_seed = Rng(config_.seed).Split("data-client").NextU64();
  d.meta = std::make_unique<client::HttpMetaClient>(*runtime_, discovery, *d.transport);
  client::MetaClient* calls = d.meta.get();
  if (config_.data.sticky_reads) {
    client::LeaderDiscoveryOptions reads = discovery;
    reads.backoff_seed = Rng(config_.seed).Split("data-client-reads").NextU64();
    d.reads = std::make_unique<client::HttpMetaClient>(*runtime_, reads, *d.transport);
    d.routing = std::make_unique<ReadRoutingMetaClient>(*d.meta, *d.reads);
    calls = d.routing.get();
  }
  SimRuntime* rt = runtime_.get();
  d.history = std::make_unique<HistoryRecorder>(*rt, [rt] { return static_cast<int64_t>(rt->true_now()); });
  d.recording = std::make_unique<RecordingMetaClient>(*calls, *d.history, [rt] { return rt->current_thread_name(); });
  d.files = std::make_unique<SimFileOps>(*disk_);
  d.aio = std::make_unique<SimAioOps>(*runtime_, *d.files);
  d.thread = runtime_->SpawnOn(d.host, "sim_data", [this] { DataPlaneMain(); });
}

void World::DataPlaneMain() {
  // As real mode's workload: register the storage once a leader serves, set up the store and the
  // TransferClient, then run the Saves and Loads until the run ends.
  DataClient& d = *data_;
  const meta::StorageConfig storage = DataWorkloadStorage(kStorageName, config_.data.inline_header);
  while (!finished_) {
    const Status added = d.meta->AddStorage(storage);
    if (added.ok()) break;  // also when this config was registered already
    if (added.code() == StatusCode::kAlreadyExists) {
      data_plane_error_ = "registering storage '" + storage.global_unique_name + "': " + added.ToString();
      return;
    }
    runtime_->SleepFor(std::chrono::milliseconds(100));
  }
  if (finished_) return;
  std::vector<std::string> paths;
  for (const std::string& p : config_.data.paths) paths.push_back("/sim/" + p);
  store::PosixStoreDeps deps{runtime_.get(), d.files.get(), d.aio.get(), Rng(config_.seed).Split("store").NextU64()};
  deps.testing.late_reads_into_caller_buffers = config_.bug == PlantedBug::kLateReadIntoCaller;
  deps.testing.health_never_trips = config_.bug == PlantedBug::kHealthNeverTrips;
  d.store = std::make_unique<store::PosixStore>(deps);
  const store::PosixStoreConfig store_config =
      DataWorkloadStoreConfig(paths, config_.data.block_size, config_.data.engine, config_.data.durable_commit);
  if (Status s = d.store->Setup(store_config); !s.ok()) {
    data_plane_error_ = "store setup: " + s.ToString();
    return;
  }
  client::TransferClientOptions options;
  options.storage = kStorageName;
  options.block_size = store_config.block_size;
  options.shard_size = store_config.shard_size;
  options.testing.skip_load_verification = config_.bug == PlantedBug::kSkipVerification;
  options.testing.skip_inline_header_check = config_.bug == PlantedBug::kInlineHeaderCheckOff;
  options.runtime = runtime_.get();  // its checksum threads are simulated threads of this host
  auto transfer = client::TransferClient::Create(*d.recording, *d.store, options);
  if (!transfer.ok()) {
    data_plane_error_ = "transfer client: " + transfer.status().ToString();
    return;
  }
  d.transfer = std::move(*transfer);
  DataWorkloadOptions load;
  load.seed = config_.seed;
  load.save_rate_per_s = config_.data.save_rate_per_s;
  load.load_rate_per_s = config_.data.load_rate_per_s;
  load.block_size = config_.data.block_size;
  load.key_space = config_.data.key_space;
  load.clients = config_.data.clients;
  d.load = std::make_unique<DataWorkload>(*runtime_, *d.transfer, load);
  d.load->Start();
}

void World::FinishDataPlane(SimResult& result) {
  if (!data_) return;
  DataClient& d = *data_;
  Thread verify = runtime_->SpawnOn(d.host, "sim_verify", [&d] {
    d.thread.Join();  // set-up done (or given up)
    if (!d.load) return;
    d.load->Stop();
    d.load->VerifyAll();
  });
  verify.Join();
  if (d.load) result.data = d.load->Counts();
  if (d.store) transitions_ = d.store->Transitions();
  result.health_transitions = transitions_.size();
  result.store_faults = store_faults_;
  result.data_plane_error = data_plane_error_;
}

void World::SetStoreRule(const SimStoreRule& r, bool installed) {
  for (const std::string& path : disk_->mount_paths()) {
    if (r.mount != "all" && path != "/sim/" + r.mount) continue;
    faultfs::RuleEngine& rules = disk_->rules(path);
    if (installed) {
      (void)rules.Add({r.rule});
    } else {
      (void)rules.Remove(r.rule.id);  // releases what it hung
    }
  }
}

void World::SwapMetaRecords(TrueNs end) {
  // The index runs on the scheduler context (SimMetaIndex::Apply), as this does: no call of a
  // node is inside it now.
  Rng rng = Rng(config_.seed).Split("meta-swap").Split(meta_swaps_);
  Result<MetaSwap> swap = SwapCacheEntries(index_->indexer(), rng, swapped_keys_);
  if (!swap.ok()) {
    Note(-1, "meta-swap", 0, 0, swap.status().message());
    return;
  }
  ++meta_swaps_;
  swapped_keys_.insert(swap->keys.begin(), swap->keys.end());
  Note(-1, "meta-swap", 1, 0, swap->keys[0] + " <-> " + swap->keys[1]);
  runtime_->At(end, [this, done = *swap] {
    Result<bool> back = SwapBack(index_->indexer(), done);
    for (const std::string& k : done.keys) swapped_keys_.erase(k);
    Note(-1, "meta-swap-back", back.ok() && *back ? 1 : 0, 0, done.keys[0] + " <-> " + done.keys[1]);
  });
}

SimStoreRule World::GeneratedStoreRule(const FaultAction& f) const {
  const std::vector<std::string> paths = config_.data.paths;
  SimStoreRule r;
  r.mount = paths.empty() ? "all" : paths[static_cast<size_t>(f.node) % paths.size()];
  faultfs::Rule& rule = r.rule;
  rule.id = "generated";
  switch (f.variant) {
    case 0:
      rule.action = faultfs::ActionKind::kErrno;
      rule.err = EIO;
      rule.trigger = faultfs::Trigger::kProbability;
      rule.probability = f.probability;
      break;
    case 1:
      rule.action = faultfs::ActionKind::kHang;
      rule.ops = faultfs::OpBit(faultfs::Op::kRead) | faultfs::OpBit(faultfs::Op::kWrite);
      break;
    case 2:
      rule.action = faultfs::ActionKind::kLatency;
      rule.latency = Duration(f.amount);
      rule.trigger = faultfs::Trigger::kProbability;
      rule.probability = f.probability;
      break;
    case 3:
      rule.action = faultfs::ActionKind::kFlipReadBits;
      rule.ops = faultfs::OpBit(faultfs::Op::kRead);
      rule.bits = 1;
      break;
    default:
      // Every read served from another block file (probability 1: a block's data and its header
      // both come from other blocks, so an inline header always tells the read is not its own).
      rule.action = faultfs::ActionKind::kMisdirectedRead;
      rule.ops = faultfs::OpBit(faultfs::Op::kRead);
      rule.source = kBlockFileGlob;
      break;
  }
  return r;
}

uint64_t World::MountCalls(const std::string& mount) const {
  uint64_t calls = 0;
  for (const std::string& path : disk_->mount_paths()) {
    if (mount == "all" || path == "/sim/" + mount) calls += disk_->mount(path)->calls;
  }
  return calls;
}

void World::CheckRecordedHistory(SimResult& result) {
  const std::vector<HistoryRecord> records = data_->history->TakeRecords();
  if (!config_.history_path.empty()) {
    if (Status s = WriteHistory(records, config_.history_path); !s.ok()) {
      result.Violate(ViolationKind::kSimulatorError, "history: " + s.ToString());
    }
  }
  result.history = Summarize(CheckHistory(records));
  const HistorySummary& h = result.history;
  if (h.keys_not_linearizable > 0 || h.keys_unknown_budget > 0) {
    result.Violate(ViolationKind::kNotLinearizable, "history " + h.verdict + ": " + h.first_anomaly);
  }
  if (h.lost_writes + h.non_monotonic_reads + h.read_your_writes > 0) {
    result.Violate(ViolationKind::kHistoryInvariant,
                   "history: " + std::to_string(h.lost_writes) + " lost write(s), " +
                       std::to_string(h.non_monotonic_reads) + " non-monotonic read(s), " +
                       std::to_string(h.read_your_writes) + " read-your-writes miss(es)");
  }
}

void World::CheckDataPlane(SimResult& result) {
  const DataWorkloadCounts& d = result.data;
  if (d.corrupt_returned > 0) {
    result.Violate(ViolationKind::kCorruptReturned,
                   std::to_string(d.corrupt_returned) + " corrupt block(s) returned as good (e.g. " +
                       (d.unreadable_examples.empty() ? std::string("?") : d.unreadable_examples.front()) + ")");
  }
  // Damage the checksums caught must come from a fault that damages data: a rule that corrupts
  // reads or writes, or a power loss without durable commits (a block cut short). Otherwise the
  // store or the client damaged it.
  bool damaging = (power_losses_ > 0 && !config_.data.durable_commit) || meta_swaps_ > 0;
  for (const StoreWindow& w : store_windows_) {
    const faultfs::ActionKind a = w.rule.rule.action;
    damaging |= a != faultfs::ActionKind::kErrno && a != faultfs::ActionKind::kLatency && a != faultfs::ActionKind::kHang;
  }
  if (d.corrupt_detected > 0 && !damaging) {
    result.Violate(ViolationKind::kUnexpectedCorruption,
                   std::to_string(d.corrupt_detected) +
                       " checksum mismatch(es) although no fault of the run damages data: the store or the client did");
  }
  // With inline headers every block read that got another block's bytes must be reported as
  // misrouted: when the only damage of the run is whole misdirected reads, a checksum mismatch
  // means a read of another block went as far as its checksum (the header was not checked).
  if (config_.data.inline_header && d.corrupt_detected > 0 && power_losses_ == 0) {
    bool only_misdirected = !store_windows_.empty() || meta_swaps_ > 0;
    for (const StoreWindow& w : store_windows_) {
      const faultfs::Rule& rule = w.rule.rule;
      const bool harmless = rule.action == faultfs::ActionKind::kErrno || rule.action == faultfs::ActionKind::kLatency ||
                            rule.action == faultfs::ActionKind::kHang;
      const bool whole_misdirect = rule.action == faultfs::ActionKind::kMisdirectedRead &&
                                   rule.trigger == faultfs::Trigger::kEvery && rule.every == 1;
      only_misdirected &= harmless || whole_misdirect;
    }
    if (only_misdirected) {
      result.Violate(ViolationKind::kMisrouteUnreported,
                     std::to_string(d.corrupt_detected) +
                         " checksum mismatch(es) where every damaged read was another block's (misdirected reads, "
                         "inline headers on): each should have been reported as a misrouted read; " +
                         std::to_string(d.misrouted_reported) + " were");
    }
  }
  if (d.acked_unreadable > 0 && (power_losses_ == 0 || config_.data.durable_commit)) {
    result.Violate(ViolationKind::kAckedLost,
                   std::to_string(d.acked_unreadable) + " of " + std::to_string(d.acked_blocks) +
                       " acknowledged block(s) unreadable at the end" +
                       (power_losses_ == 0 ? " with no power loss" : " with durable commits") + " (e.g. " +
                       (d.unreadable_examples.empty() ? std::string("?") : d.unreadable_examples.front()) + ")");
  }
  // A path that fails most calls for a while must be excluded (window 4, 2 failures trip it):
  // every EIO rule of probability >= 0.5, lasting 3 s or more, over 16 calls or more.
  for (const StoreWindow& w : store_windows_) {
    const faultfs::Rule& rule = w.rule.rule;
    if (rule.action != faultfs::ActionKind::kErrno || w.rule.mount == "all") continue;
    if (rule.trigger == faultfs::Trigger::kProbability && rule.probability < 0.5) continue;
    if (w.end - w.start < 3'000 * kMsNs || w.calls < 16) continue;
    const std::string path = "/sim/" + w.rule.mount;
    const SimClock& clock = runtime_->clock(data_->host);
    // Excluded during the window, or still excluded when it began (an earlier fault tripped it and
    // failing probes kept it out).
    bool excluded = false;
    bool excluded_at_start = false;
    for (const store::HealthTransition& t : transitions_) {
      if (t.path != path) continue;
      const TrueNs at = clock.TrueWhenMonoReaches(t.at, 0);
      if (at < w.start) excluded_at_start = !t.available;  // transitions are in time order
      excluded |= !t.available && at >= w.start && at <= w.end;
    }
    excluded |= excluded_at_start;
    if (!excluded) {
      result.Violate(ViolationKind::kHealthNeverTripped,
                     "path " + path + " failed with " + ErrnoText(rule.err) + " on " +
                         (rule.trigger == faultfs::Trigger::kProbability ? std::to_string(rule.probability) : std::string("every")) +
                         " of its calls for " + std::to_string((w.end - w.start) / kMsNs) + " ms (" + std::to_string(w.calls) +
                         " calls) and was never excluded");
    }
  }
}

void World::Kill(Incarnation& inc) {
  // The process is gone: its threads freeze for good, nobody answers on its ports.
  runtime_->CrashNode(inc.node);
  inc.crashed = true;
  inc.server->Kill();
  const TrueNs now = runtime_->true_now();
  CloseActing(inc, now);
  CloseBelieving(inc, now);
  current_[static_cast<size_t>(inc.node)] = nullptr;
}

int World::LeaderNode() const {
  for (const Incarnation* inc : current_) {
    if (inc != nullptr && inc->acting >= 0) return inc->node;
  }
  for (const Incarnation* inc : current_) {
    if (inc != nullptr && inc->state == election::ElectorState::kLeader) return inc->node;
  }
  return -1;
}

int World::Resolve(const FaultAction& fault) const {
  if (fault.target_leader) {
    const int leader = LeaderNode();
    if (leader >= 0) return leader;
  }
  if (fault.target_follower) {
    const int leader = LeaderNode();
    for (int n = 0; n < config_.nodes; ++n) {
      if (n != leader && current_[static_cast<size_t>(n)] != nullptr) return n;
    }
  }
  return fault.node;
}

std::vector<int> World::CoordinationHosts(int member) {
  if (!etcd_) return {CoordinationHost()};
  if (member >= 0) return {etcd_hosts_[static_cast<size_t>(member)]};
  return etcd_hosts_;
}

bool World::IsCoordinationHost(int host) const {
  return host == redis_host_ || host == replica_host_ ||
         std::find(etcd_hosts_.begin(), etcd_hosts_.end(), host) != etcd_hosts_.end();
}

std::vector<int> World::BackendClockHosts() const { return etcd_ ? etcd_hosts_ : std::vector<int>{redis_host_}; }

bool World::HeldWith(int host, uint64_t token) {
  if (host >= config_.nodes) return false;
  const std::string& holder = runtime_->node_name(host);
  return etcd_truth_ ? etcd_truth_->HeldWith(holder, token) : Coordination().HeldWith(holder, token);
}

election::EtcdEndpoints World::EtcdEndpointsOf() const {
  election::EtcdEndpoints e;
  for (int host : etcd_hosts_) e.members.push_back(election::EtcdMember{runtime_->node_name(host), 2379});
  e.timeout_ms = config_.backend_timeout_ms;
  e.retry_count = config_.backend_retries;
  return e;
}

void World::EtcdOutage(const FaultAction& f, TrueNs end) {
  std::vector<int> members;
  for (int m = 0; m < etcd_->members(); ++m) {
    if (f.member < 0 || f.member == m) members.push_back(m);
  }
  // One member: variant 0 crashes it, 1 pauses it; every member: 1 crashes them, 2 pauses them.
  const bool pause = f.variant == (f.member >= 0 ? 1 : 2);
  for (int m : members) {
    std::vector<int>& count = pause ? etcd_pauses_ : etcd_crashes_;
    if (count[static_cast<size_t>(m)]++ == 0) pause ? etcd_->Pause(m) : etcd_->Crash(m);
  }
  runtime_->At(end, [this, members, pause] {
    for (int m : members) {
      std::vector<int>& count = pause ? etcd_pauses_ : etcd_crashes_;
      if (count[static_cast<size_t>(m)] > 0 && --count[static_cast<size_t>(m)] == 0) {
        pause ? etcd_->Resume(m) : etcd_->Restart(m);  // a crashed member comes back with its data
      }
    }
  });
}

void World::CutEtcdPeers(const FaultAction& f) {
  if (!etcd_) return;  // ValidateSimConfig refuses it on other backends
  const int member = f.member >= 0 ? f.member : etcd_->leader();
  if (member < 0) return;  // no raft leader to cut now
  const TrueNs now = runtime_->true_now();
  const TrueNs end = now + f.duration_ns;
  // No node is involved: judged as a member fault (the other two keep a quorum and serve).
  records_.faults.push_back(FaultRecord{now, end, f.kind, -1, f.variant, f.peers, member});
  Note(-1, "fault", static_cast<int64_t>(f.kind), member, FaultKindName(f.kind));
  const auto set = [this, member](bool cut) {
    for (int m = 0; m < etcd_->members(); ++m) {
      if (m == member) continue;
      int& count = etcd_cuts_[static_cast<size_t>(std::min(m, member))][static_cast<size_t>(std::max(m, member))];
      if (cut ? count++ == 0 : (count > 0 && --count == 0)) etcd_->CutPeers(member, m, cut);
    }
  };
  set(true);
  runtime_->At(end, [set] { set(false); });
}

void World::HealEtcd() {
  if (!etcd_) return;
  for (int a = 0; a < etcd_->members(); ++a) {
    for (int b = a + 1; b < etcd_->members(); ++b) {
      int& count = etcd_cuts_[static_cast<size_t>(a)][static_cast<size_t>(b)];
      if (count > 0) etcd_->CutPeers(a, b, false);
      count = 0;
    }
  }
  for (int m = 0; m < etcd_->members(); ++m) {
    etcd_pauses_[static_cast<size_t>(m)] = 0;
    etcd_crashes_[static_cast<size_t>(m)] = 0;
    etcd_->Resume(m);
    etcd_->Restart(m);
  }
}

void World::SetBackendReachable(int node, bool to, bool from, bool reachable) {
  for (int host : CoordinationHosts()) {
    if (to) network_->link(node, host).partitioned = !reachable;
    if (from) network_->link(host, node).partitioned = !reachable;
  }
}

std::vector<int> World::PeerHosts(int node, PartitionPeers peers) const {
  std::vector<int> hosts;
  for (int host = 0; host < runtime_->node_count(); ++host) {
    if (host == node) continue;
    const bool coordination = IsCoordinationHost(host);
    if (peers == PartitionPeers::kAll ||
        (peers == PartitionPeers::kCoordination ? coordination : !coordination && host != index_host_)) {
      hosts.push_back(host);
    }
  }
  return hosts;
}

void World::SetPeersReachable(int node, PartitionPeers peers, bool to, bool from, bool reachable) {
  for (int host : PeerHosts(node, peers)) {
    if (to) network_->link(node, host).partitioned = !reachable;
    if (from) network_->link(host, node).partitioned = !reachable;
  }
}

void World::FailOverCoordination(const FaultAction& f) {
  if (!sentinel_) return;  // ValidateSimConfig refuses it without a replica
  const bool cut = f.duration_ns > 0;
  Note(-1, "fault", static_cast<int64_t>(f.kind), cut ? 1 : 0, FaultKindName(f.kind));
  if (cut) sentinel_->CutReplication(true);
  runtime_->At(runtime_->true_now() + f.duration_ns, [this, f, cut] {
    if (finished_ || !sentinel_->Failover()) return;
    // Leadership is disturbed from the primary's death, not from the replica falling behind.
    const TrueNs now = runtime_->true_now();
    records_.faults.push_back(FaultRecord{now, sentinel_->promotion_at(), f.kind, -1, cut ? 1 : 0, f.peers});
  });
}

void World::ApplyFault(const FaultAction& f) {
  if (finished_ || runtime_->true_now() >= quiet_start_ns_) return;
  if (f.kind == FaultKind::kCoordinationFailover) {
    FailOverCoordination(f);
    return;
  }
  if (f.kind == FaultKind::kPartition && f.peers == PartitionPeers::kEtcdPeers) {
    CutEtcdPeers(f);
    return;
  }
  const int node = Resolve(f);
  const TrueNs now = runtime_->true_now();
  records_.faults.push_back(FaultRecord{now, now + f.duration_ns, f.kind, node, f.variant, f.peers, f.member});
  Note(node, "fault", static_cast<int64_t>(f.kind), f.variant, FaultKindName(f.kind));
  const TrueNs end = now + f.duration_ns;
  auto restart_later = [this, node, end] {
    runtime_->At(end, [this, node] {
      if (!finished_ && current_[static_cast<size_t>(node)] == nullptr) StartNode(node);
    });
  };
  switch (f.kind) {
    case FaultKind::kCrash: {
      Incarnation* inc = current_[static_cast<size_t>(node)];
      if (inc == nullptr) break;  // already down
      Kill(*inc);
      restart_later();
      break;
    }
    case FaultKind::kPause:
      ++pauses_[static_cast<size_t>(node)];
      runtime_->SetPaused(node, true);
      runtime_->At(end, [this, node] {
        if (--pauses_[static_cast<size_t>(node)] == 0) runtime_->SetPaused(node, false);
      });
      break;
    case FaultKind::kPartition: {
      // Variant 0: both ways; 1: requests lost; 2: replies lost; 3: a degrading link (replies slow
      // down for the first third, then the link is cut).
      if (f.variant == 3) {
        const std::vector<int> coordination = CoordinationHosts(f.member);
        const auto set_reachable = [this, node, coordination](bool reachable) {
          for (int host : coordination) network_->SetPartitioned(node, host, !reachable);
        };
        for (int host : coordination) network_->link(host, node).extra_ns = f.amount;
        const TrueNs cut = now + f.duration_ns / 3;
        runtime_->At(cut, [this, node, coordination, set_reachable] {
          for (int host : coordination) network_->link(host, node).extra_ns = 0;
          set_reachable(false);
        });
        runtime_->At(std::max(end, cut), [set_reachable] { set_reachable(true); });
        break;
      }
      const bool to = f.variant != 2;
      const bool from = f.variant != 1;
      if (f.member >= 0 && etcd_) {
        // The node's link to one etcd member only: its client moves on to the other two.
        const int host = etcd_hosts_[static_cast<size_t>(f.member)];
        const auto set = [this, node, host, to, from](bool reachable) {
          if (to) network_->link(node, host).partitioned = !reachable;
          if (from) network_->link(host, node).partitioned = !reachable;
        };
        set(false);
        runtime_->At(end, [set] { set(true); });
        break;
      }
      const PartitionPeers peers = f.peers;
      SetPeersReachable(node, peers, to, from, false);
      runtime_->At(end, [this, node, peers, to, from] { SetPeersReachable(node, peers, to, from, true); });
      break;
    }
    case FaultKind::kBackendOutage:
    case FaultKind::kBackendWipe: {
      const bool unreachable = f.kind == FaultKind::kBackendOutage && f.variant == 0 && f.member < 0;
      if (etcd_ && !unreachable) {
        EtcdOutage(f, end);  // ValidateSimConfig refuses wipes: etcd keeps its data on disk
      } else if (unreachable) {
        if (backend_outages_++ == 0) {
          for (int n = 0; n < config_.nodes; ++n) SetBackendReachable(n, true, true, false);
        }
        runtime_->At(end, [this] {
          if (--backend_outages_ == 0) {
            for (int n = 0; n < config_.nodes; ++n) SetBackendReachable(n, true, true, true);
          }
        });
      } else if (Coordination().up()) {
        // Down, then restarted with its data (outage) or empty (wipe: locks and fencing counters
        // lost; the meta index, a separate durable service, keeps its fence).
        SimRedis* server = &Coordination();
        server->Crash();
        const bool persistent = f.kind == FaultKind::kBackendOutage;
        runtime_->At(end, [this, server, persistent] {
          if (!server->up() && (server != redis_.get() || MayRestartCoordination())) server->Restart(persistent);
        });
      }
      break;
    }
    case FaultKind::kClock:
      if (f.variant == 0) runtime_->SetDriftPpm(node, f.amount);
      if (f.variant == 1) {
        backend_drift_ppm_ = f.amount;
        if (!backend_slewing_) {
          for (int host : BackendClockHosts()) runtime_->SetDriftPpm(host, f.amount);
        }
      }
      if (f.variant == 4 && !backend_slewing_) {  // a slew: fast drift for a moment, then back
        backend_slewing_ = true;
        for (int host : BackendClockHosts()) runtime_->SetDriftPpm(host, backend_drift_ppm_ + f.amount);
        runtime_->At(end, [this] {
          backend_slewing_ = false;
          for (int host : BackendClockHosts()) runtime_->SetDriftPpm(host, backend_drift_ppm_);
        });
      }
      if (f.variant == 2) runtime_->StepWall(node, Duration(f.amount));
      if (f.variant == 3) runtime_->StepMonoForward(node, Duration(f.amount));
      break;
    case FaultKind::kBackendClock:
      for (int host : BackendClockHosts()) runtime_->StepWall(host, Duration(f.amount));
      break;
    case FaultKind::kNet: {
      // Even variants: what the node sends; odd: what it receives. On its link to coordination,
      // or on its links to every host that calls its API.
      const bool outbound = f.variant % 2 == 0;
      const int what = f.variant / 2;
      const std::vector<int> peers = f.member >= 0 && etcd_ ? CoordinationHosts(f.member) : PeerHosts(node, f.peers);
      for (int peer : peers) {
        const int from_host = outbound ? node : peer;
        const int to_host = outbound ? peer : node;
        LinkParams& link = network_->link(from_host, to_host);
        if (what == 0) link.loss = f.probability;
        if (what == 1) link.duplicate = f.probability;
        if (what == 2) link.extra_ns = f.amount;
        if (what == 3) link.jitter_ns += f.amount;  // on top of the link's own jitter, which comes back after
        runtime_->At(end, [this, from_host, to_host, what, amount = f.amount] {
          LinkParams& l = network_->link(from_host, to_host);
          if (what == 0) l.loss = 0;
          if (what == 1) l.duplicate = 0;
          if (what == 2) l.extra_ns = 0;
          if (what == 3) l.jitter_ns -= amount;
        });
      }
      break;
    }
    case FaultKind::kSlow:
      runtime_->SetSlowCpu(node, Duration(f.amount));
      runtime_->At(end, [this, node] { runtime_->SetSlowCpu(node, Duration::zero()); });
      break;
    case FaultKind::kDemote: {
      Incarnation* inc = current_[static_cast<size_t>(node)];
      if (inc == nullptr || !inc->started) break;
      // The admin API's LeaderDemote, as an operator would call it.
      // IsLeader() is false once Demote returns: the node stops acting then.
      admin_threads_.push_back(runtime_->SpawnOn(node, "sim_demote", [this, inc] {
        (void)inc->meta->Demote(std::nullopt);
        CloseActing(*inc, runtime_->true_now());
      }));
      break;
    }
    case FaultKind::kStoreFault: {
      if (!disk_) break;
      SimStoreRule rule;
      if (f.store_rule >= 0) {
        if (f.store_rule >= static_cast<int>(config_.store_rules.size())) break;
        rule = config_.store_rules[static_cast<size_t>(f.store_rule)];
      } else {
        rule = GeneratedStoreRule(f);
      }
      rule.rule.id += "@" + std::to_string(now);  // each occurrence is its own rule
      SetStoreRule(rule, true);
      store_windows_.push_back(StoreWindow{rule, now, end, MountCalls(rule.mount)});
      const size_t window = store_windows_.size() - 1;
      ++store_faults_;
      runtime_->At(end, [this, rule, window] {
        SetStoreRule(rule, false);
        store_windows_[window].calls = MountCalls(rule.mount) - store_windows_[window].calls;
      });
      break;
    }
    case FaultKind::kMetaSwap:
      SwapMetaRecords(end);
      break;
    case FaultKind::kCoordinationFailover:
      break;  // FailOverCoordination, above
    case FaultKind::kStoreCrash:
      if (disk_) {
        const auto crash = [this] { disk_->storage("share")->Crash(); };
        if (data_ && data_->load) {
          data_->load->LosePower(crash);
        } else {
          crash();
        }
        ++store_faults_;
        ++power_losses_;
      }
      break;
    case FaultKind::kStop: {
      // SIGTERM: the node stops serving calls, then resigns (a leader demotes and unlocks first);
      // it counts as down until it is started again at the end of the fault.
      Incarnation* inc = current_[static_cast<size_t>(node)];
      if (inc == nullptr) break;
      inc->stop = true;
      current_[static_cast<size_t>(node)] = nullptr;
      admin_threads_.push_back(runtime_->SpawnOn(node, "sim_stop", [this, inc] {
        inc->server->Stop();
        CloseActing(*inc, runtime_->true_now());
        inc->starter.Join();
        inc->meta->Stop();
      }));
      restart_later();
      break;
    }
  }
}

void World::StartQuiet() {
  // Everything heals: links, paused and slowed nodes, the backend; crashed nodes come back.
  Note(-1, "quiet-phase");
  network_->HealAll();
  backend_outages_ = 0;
  if (!Coordination().up() && MayRestartCoordination()) Coordination().Restart(true);
  HealEtcd();
  for (int node = 0; node < config_.nodes; ++node) {
    pauses_[static_cast<size_t>(node)] = 0;
    runtime_->SetPaused(node, false);
    runtime_->SetSlowCpu(node, Duration::zero());
    if (current_[static_cast<size_t>(node)] == nullptr) StartNode(node);
  }
}

void World::Teardown(SimResult& result) {
  finished_ = true;
  network_->HealAll();
  if (!Coordination().up() && MayRestartCoordination()) Coordination().Restart(true);
  HealEtcd();
  for (auto& inc : incarnations_) {
    if (inc->crashed) {
      if (inc->coordination != nullptr) inc->coordination->CutOff();
      if (inc->etcd != nullptr) inc->etcd->CutOff();
      inc->index->CutOff();
    }
  }
  for (int node = 0; node < config_.nodes; ++node) {
    runtime_->SetPaused(node, false);
    runtime_->SetSlowCpu(node, Duration::zero());
    runtime_->ReviveCrashed(node);
  }
  // Clients and probes first (they see finished_), then every node: its API, then MetaNode::Stop.
  if (disk_) {
    for (const std::string& path : disk_->mount_paths()) disk_->rules(path).Clear();  // hung calls return
  }
  if (data_) {
    DataClient* d = data_.get();
    // The store waits for its late attempts and joins its threads: on its own host.
    Thread stop = runtime_->SpawnOn(d->host, "sim_stop", [d] {
      d->thread.Join();
      if (d->load) d->load->Stop();
      // The store waits for its late attempts, which may still write into the workload's
      // buffers (a planted bug): the workload goes last.
      d->transfer.reset();
      d->store.reset();
      d->aio.reset();
      d->load.reset();
    });
    stop.Join();
  }
  for (auto& c : clients_) c->thread.Join();
  for (Thread& t : probes_) t.Join();
  for (Thread& t : admin_threads_) t.Join();
  std::vector<Thread> stoppers;
  for (auto& inc : incarnations_) {
    if (inc->stop) continue;  // a graceful stop already ran
    inc->stop = true;
    Incarnation* p = inc.get();
    stoppers.push_back(runtime_->SpawnOn(p->node, "sim_stop", [p] {
      p->server->Stop();
      p->starter.Join();
      p->meta->Stop();
    }));
  }
  for (Thread& t : stoppers) t.Join();
  const std::string report = runtime_->ThreadReport();
  if (!report.empty()) {
    result.Violate(ViolationKind::kShutdown, "shutdown: threads that never finished (deadlock?):\n" + report);
    leak_on_exit_ = true;
  }
}

SimResult World::Run() {
  // Host time through the real runtime, read only to report how fast the run went
  // (wall_seconds); it never enters the trace or any simulated decision.
  Runtime& host = Runtime::Real();
  const MonoTime wall_start = host.Now();
  SimResult result;
  result.seed = config_.seed;
  const int64_t duration_ns = config_.duration_ms * kMsNs;
  const int64_t lease_ns = config_.lease_ms * kMsNs;
  const int64_t bound_ns = (config_.liveness_bound_ms > 0 ? config_.liveness_bound_ms : 2 * config_.lease_ms) * kMsNs;
  const int64_t quiet_ns = std::max<int64_t>(static_cast<int64_t>(static_cast<double>(duration_ns) * config_.quiet_fraction),
                                             bound_ns + 2 * lease_ns);
  quiet_start_ns_ = config_.quiet_start_ms >= 0 ? std::min(config_.quiet_start_ms * kMsNs, duration_ns)
                                                : std::max<int64_t>(0, duration_ns - quiet_ns);
  result.quiet_start_ns = quiet_start_ns_;

  FaultPlanOptions plan;
  plan.kinds = config_.faults;
  plan.nodes = config_.nodes;
  plan.chaos_start_ns = lease_ns;  // a first leader has been elected by then
  plan.chaos_end_ns = quiet_start_ns_;
  plan.lease_ns = lease_ns;
  plan.max_drift_ppm = config_.fault_drift_ppm;
  plan.store_mounts = static_cast<int>(config_.data.paths.size());
  plan.store_fault_variants = config_.store_fault_variants;
  plan.etcd_members = etcd_ ? etcd_->members() : 0;
  plan.coordination_failover = sentinel_ != nullptr;
  std::vector<FaultAction> faults = GenerateFaults(Rng(config_.seed).Split("faults"), plan);
  faults.insert(faults.end(), config_.explicit_faults.begin(), config_.explicit_faults.end());
  result.faults_injected = faults.size();
  for (const FaultAction& f : faults) runtime_->At(f.t, [this, f] { ApplyFault(f); });
  if (quiet_start_ns_ > 0) runtime_->At(quiet_start_ns_, [this] { StartQuiet(); });
  if (config_.test_perturb_at_ms >= 0) runtime_->At(config_.test_perturb_at_ms * kMsNs, [this] { Note(-1, "perturb"); });
  for (int node = 0; node < config_.nodes; ++node) {
    const TrueNs start = static_cast<TrueNs>(world_rng_.UniformInt(0, 2 * config_.loop_ms)) * kMsNs;
    runtime_->At(start, [this, node] {
      if (!finished_) StartNode(node);
    });
  }
  observer_transport_ = std::make_unique<SimNodeTransport>(
      *runtime_, *network_, observer_host_, [this](std::string_view name) { return HostOf(name); },
      [this](int h, ApiCall call) { Deliver(h, std::move(call)); });
  for (int node = 0; node < config_.nodes; ++node) {
    probes_.push_back(runtime_->SpawnOn(observer_host_, "sim_probe", [this, node] { ProbeLoop(node); }));
  }
  StartClients();
  if (config_.data.on()) StartDataPlane();

  try {
    const SimRuntime::StopReason reason = runtime_->RunUntil(duration_ns);
    if (reason == SimRuntime::StopReason::kDeadlock) {
      result.Violate(ViolationKind::kDeadlock, "deadlock at " + std::to_string(runtime_->true_now() / kMsNs) + " ms:\n" +
                                  runtime_->ThreadReport());
    }
    FinishDataPlane(result);
  } catch (const std::exception& e) {
    result.Violate(ViolationKind::kSimulatorError, std::string("simulator error: ") + e.what());
  }
  const TrueNs end_ns = runtime_->true_now();
  for (auto& inc : incarnations_) {
    if (!inc->crashed) CloseActing(*inc, end_ns);
    CloseBelieving(*inc, end_ns);
  }
  records_.end_ns = end_ns;
  for (const auto* list : {&records_.believing, &records_.acting}) {
    for (const Interval& i : *list) {
      result.leadership.push_back(LeadershipInterval{i.node, i.start, i.end < 0 ? end_ns : i.end, list == &records_.acting});
    }
  }
  try {
    Teardown(result);
  } catch (const std::exception& e) {
    result.Violate(ViolationKind::kShutdown, std::string("shutdown error: ") + e.what());
    leak_on_exit_ = true;
  }

  records_.grants = Truth().grants;
  records_.lease_ends = Truth().lease_ends;
  CheckerOptions check;
  check.lease_ns = lease_ns;
  check.safety_margin_ns = election::DefaultSafetyMarginMs(config_.lease_ms, config_.loop_ms) * kMsNs;
  check.quiet_start_ns = quiet_start_ns_;
  check.loop_ns = config_.loop_ms * kMsNs;
  check.liveness_bound_ns = bound_ns;
  RunCheckers(records_, check, result);
  result.index = index_->counters();
  result.token_regressions = Truth().token_regressions;
  result.grants = Truth().grants.size();
  result.duplicate_lock_holders = Truth().duplicate_holders;
  if (sentinel_) {
    result.coordination_promotions = sentinel_->promotions();
    result.replication_writes_lost = sentinel_->writes_lost();
  }
  if (etcd_) {
    result.coordination_elections = etcd_->counters().elections;
    result.coordination_leases_expired = etcd_->counters().leases_expired;
    result.coordination_unanswered = etcd_->counters().unanswered;
    result.coordination_no_leader = etcd_->counters().no_leader;
  }
  result.writes_acting = writes_acting_;
  result.client_ops = client_ops_;
  result.client_errors = client_errors_;
  if (result.index.stale_accepted > 0) {
    result.Violate(ViolationKind::kStaleWriteAccepted, std::to_string(result.index.stale_accepted) + " stale write(s) accepted by the meta index");
  }
  if (result.index.holder_writes_rejected > 0) {
    // A liveness loss: the lock holder could not write.
    result.Violate(ViolationKind::kLiveness, "liveness: " + std::to_string(result.index.holder_writes_rejected) +
                                " write(s) of the lock holder's own term refused by the fence (its token is below "
                                "the fence: a counter reset nobody raised past?)");
  }
  if (result.token_regressions > 0) {
    result.Violate(ViolationKind::kTokenRegression, std::to_string(result.token_regressions) + " fencing token regression(s)");
  }
  if (data_) CheckDataPlane(result);
  if (data_ && config_.check_history) CheckRecordedHistory(result);
  if (!result.data_plane_error.empty()) result.Violate(ViolationKind::kDataPlane, "data plane: " + result.data_plane_error);
  result.simulated_ns = end_ns;
  result.trace_hash = runtime_->trace().hash();
  result.events = runtime_->trace().events();
  result.checkpoints = runtime_->trace().checkpoints();
  result.checkpoint_every = runtime_->trace().checkpoint_every();
  result.captured = runtime_->trace().captured();
  result.context_switches = runtime_->context_switches();
  result.network = network_->counters();
  result.buggify_fired = runtime_->BuggifyFired();
  result.wall_seconds = std::chrono::duration<double>(host.Now() - wall_start).count();
  return result;
}

}  // namespace

const char* ViolationKindName(ViolationKind kind) {
  switch (kind) {
    case ViolationKind::kStaleWriteAccepted: return "stale-write-accepted";
    case ViolationKind::kTokenRegression: return "token-regression";
    case ViolationKind::kDualActing: return "dual-acting";
    case ViolationKind::kLiveness: return "liveness";
    case ViolationKind::kCorruptReturned: return "corrupt-returned";
    case ViolationKind::kDataPlane: return "data-plane";
    case ViolationKind::kDeadlock: return "deadlock";
    case ViolationKind::kShutdown: return "shutdown";
    case ViolationKind::kSimulatorError: return "simulator-error";
    case ViolationKind::kUnexpectedCorruption: return "unexpected-corruption";
    case ViolationKind::kAckedLost: return "acked-lost";
    case ViolationKind::kHealthNeverTripped: return "health-never-tripped";
    case ViolationKind::kNotLinearizable: return "not-linearizable";
    case ViolationKind::kHistoryInvariant: return "history-invariant";
    case ViolationKind::kMisrouteUnreported: return "misroute-unreported";
  }
  return "?";
}

const char* PlantedBugName(PlantedBug bug) {
  switch (bug) {
    case PlantedBug::kNone: return "none";
    case PlantedBug::kNoSafetyMargin: return "no-safety-margin";
    case PlantedBug::kLeaseFromResponse: return "lease-from-response";
    case PlantedBug::kServeWhileDemoting: return "serve-while-demoting";
    case PlantedBug::kFenceOff: return "fence-off";
    case PlantedBug::kRecoverySkipsFence: return "recovery-skips-fence";
    case PlantedBug::kLateReadIntoCaller: return "late-read-into-caller";
    case PlantedBug::kHealthNeverTrips: return "health-never-trips";
    case PlantedBug::kSkipVerification: return "skip-verification";
    case PlantedBug::kAckBeforeIndex: return "ack-before-index";
    case PlantedBug::kInlineHeaderCheckOff: return "inline-header-check-off";
    case PlantedBug::kDeposedLeaderReads: return "deposed-leader-reads";
    case PlantedBug::kFollowerCachedReads: return "follower-cached-reads";
  }
  return "?";
}

std::vector<PlantedBug> AllPlantedBugs() {
  return {PlantedBug::kNoSafetyMargin,      PlantedBug::kLeaseFromResponse,  PlantedBug::kServeWhileDemoting,
          PlantedBug::kFenceOff,            PlantedBug::kRecoverySkipsFence, PlantedBug::kLateReadIntoCaller,
          PlantedBug::kHealthNeverTrips,    PlantedBug::kSkipVerification,   PlantedBug::kAckBeforeIndex,
          PlantedBug::kInlineHeaderCheckOff, PlantedBug::kDeposedLeaderReads, PlantedBug::kFollowerCachedReads};
}

Result<PlantedBug> ParsePlantedBug(std::string_view text) {
  std::string valid = "none";
  if (text == "none") return PlantedBug::kNone;
  for (PlantedBug bug : AllPlantedBugs()) {
    if (text == PlantedBugName(bug)) return bug;
    valid += std::string(", ") + PlantedBugName(bug);
  }
  return Status::InvalidArgument("--bug: unknown planted bug '" + std::string(text) + "' (valid: " + valid + ")");
}

Status ValidateSimConfig(const SimConfig& c) {
  if (c.nodes < 1 || c.nodes > 64) return Status::InvalidArgument("--nodes must be in 1..64, got " + std::to_string(c.nodes));
  if (c.lease_ms <= 0) return Status::InvalidArgument("--lease-ms must be > 0, got " + std::to_string(c.lease_ms));
  if (c.loop_ms <= 0 || c.loop_ms >= c.lease_ms) {
    return Status::InvalidArgument("--loop-ms must be > 0 and < --lease-ms, got " + std::to_string(c.loop_ms));
  }
  if (c.duration_ms <= 0) return Status::InvalidArgument("--duration must be > 0");
  if (c.max_drift_ppm < 0 || c.max_drift_ppm > 100'000 || c.fault_drift_ppm < 0 || c.fault_drift_ppm > 100'000) {
    return Status::InvalidArgument("clock drifts must be in 0..100000 ppm");
  }
  if (c.quiet_fraction < 0 || c.quiet_fraction > 1) return Status::InvalidArgument("quiet fraction must be in [0, 1]");
  const SimSentinelOptions& r = c.sentinel;
  if (r.replication_lag_min_ns < 0 || r.replication_lag_max_ns < r.replication_lag_min_ns ||
      r.promotion_delay_min_ns < 0 || r.promotion_delay_max_ns < r.promotion_delay_min_ns) {
    return Status::InvalidArgument("redis-sentinel: replication lag and promotion delay need 0 <= min <= max");
  }
  const bool failover = std::any_of(c.explicit_faults.begin(), c.explicit_faults.end(),
                                    [](const FaultAction& f) { return f.kind == FaultKind::kCoordinationFailover; });
  if (failover && c.coordination != SimCoordination::kRedisSentinel) {
    return Status::InvalidArgument("coordination-failover promotes a Redis replica: the world needs coordination redis-sentinel");
  }
  if (c.coordination == SimCoordination::kEtcd) {
    const bool wipe = (c.faults & FaultBit(FaultKind::kBackendWipe)) != 0 ||
                      std::any_of(c.explicit_faults.begin(), c.explicit_faults.end(),
                                  [](const FaultAction& f) { return f.kind == FaultKind::kBackendWipe; });
    if (wipe) return Status::InvalidArgument("backend-wipe: etcd members keep their data on disk (a crashed member restarts with it)");
    const SimEtcdOptions& e = c.etcd;
    if (e.election_timeout_min_ns <= 0 || e.election_timeout_max_ns < e.election_timeout_min_ns || e.vote_max_ns < 0 ||
        e.min_ttl_s < 1 || e.revoke_delay_max_ns < 0) {
      return Status::InvalidArgument("etcd: election timeouts need 0 < min <= max, min_ttl_s >= 1, delays >= 0");
    }
  }
  for (const FaultAction& f : c.explicit_faults) {
    if (f.peers == PartitionPeers::kEtcdPeers && c.coordination != SimCoordination::kEtcd) {
      return Status::InvalidArgument("a fault cuts an etcd member from its peers: the world needs coordination etcd");
    }
    if (f.member >= kSimEtcdMembers || (f.member >= 0 && c.coordination != SimCoordination::kEtcd)) {
      return Status::InvalidArgument("a fault names etcd member " + std::to_string(f.member) +
                                     ": the world needs coordination etcd, whose members are 0.." +
                                     std::to_string(kSimEtcdMembers - 1));
    }
  }
  if (c.clients < 0 || c.clients > 64) return Status::InvalidArgument("clients must be in 0..64");
  if (c.write_interval_ms <= 0 || c.client_interval_ms <= 0) return Status::InvalidArgument("write intervals must be > 0 ms");
  if (c.backend_timeout_ms < 1 || c.backend_retries < 0) {
    return Status::InvalidArgument("the backend client needs a timeout >= 1 ms and retries >= 0, got " +
                                   std::to_string(c.backend_timeout_ms) + " ms and " +
                                   std::to_string(c.backend_retries));
  }
  if (c.safety_margin_ms < -1 || c.safety_margin_ms >= c.lease_ms) {
    return Status::InvalidArgument("the safety margin must be -1 (default) or in 0..lease, got " +
                                   std::to_string(c.safety_margin_ms) + " ms");
  }
  if (c.forbid_campaign_ms < 0) return Status::InvalidArgument("the forbid-campaign time must be >= 0");
  return Status::Ok();
}

SimResult RunSimulation(const SimConfig& config) {
  Status s = ValidateSimConfig(config);
  if (!s.ok()) throw std::invalid_argument(s.message());
  World world(config);
  return world.Run();
}

const char* SimCoordinationName(SimCoordination kind) {
  switch (kind) {
    case SimCoordination::kRedis: return "sim-redis";
    case SimCoordination::kRedisSentinel: return "redis-sentinel";
    case SimCoordination::kEtcd: return "etcd";
  }
  return "unknown";
}

Result<SimCoordination> ParseSimCoordination(std::string_view text) {
  for (SimCoordination kind : {SimCoordination::kRedis, SimCoordination::kRedisSentinel, SimCoordination::kEtcd}) {
    if (text == SimCoordinationName(kind)) return kind;
  }
  return Status::InvalidArgument("--coordination '" + std::string(text) +
                                 "': expected one of sim-redis, redis-sentinel, etcd");
}

std::string ReproCommand(const SimConfig& c) {
  std::string cmd = "kvchaos sim --seed " + std::to_string(c.seed) + " --nodes " + std::to_string(c.nodes) +
                    " --lease-ms " + std::to_string(c.lease_ms) + " --loop-ms " + std::to_string(c.loop_ms) +
                    " --duration " + std::to_string(c.duration_ms) + "ms --faults " + FaultListString(c.faults);
  if (c.data.on()) cmd += " --data";
  if (c.coordination != SimCoordination::kRedis) cmd += std::string(" --coordination ") + SimCoordinationName(c.coordination);
  if (c.bug != PlantedBug::kNone) cmd += std::string(" --bug ") + PlantedBugName(c.bug);
  if (!c.buggify) cmd += " --no-buggify";
  return cmd;
}

std::string SummaryLine(const SimResult& r) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "seed=%" PRIu64 " hash=%016" PRIx64 " events=%" PRIu64 " faults=%" PRIu64 " failovers=%zu unnecessary=%" PRIu64
                " stale_accepted=%" PRIu64 " stale_rejected=%" PRIu64 " token_regressions=%" PRIu64
                " dual_acting=%" PRIu64 " dual_believing=%" PRIu64 " leader_after_quiet_ms=%lld",
                r.seed, r.trace_hash, r.events, r.faults_injected, r.failovers.size(), r.unnecessary_failovers,
                r.index.stale_accepted, r.index.stale_rejected, r.token_regressions, r.dual_acting_windows,
                r.dual_believing_windows,
                static_cast<long long>(r.leader_after_quiet_ns < 0 ? -1 : r.leader_after_quiet_ns / kMsNs));
  std::string line(buf);
  if (r.ok()) {
    line += " OK";
  } else {
    const std::string& first = r.violations.front().message;
    line += " VIOLATION: " + first.substr(0, first.find('\n'));
  }
  return line;
}

}  // namespace kvchaos::sim
