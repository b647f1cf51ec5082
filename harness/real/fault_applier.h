// FaultApplier: carries out a real-mode scenario's faults on the running processes, in true time.
// The run calls Start and End as the timeline reaches each step; the applier resolves which node a
// fault means at that moment (the leader is asked, not guessed), acts (SIGKILL/SIGTERM/SIGSTOP,
// restarts, admin demotes, Redis pause or empty restart, faultfs rules, proxy partitions, node clocks
// through the clock preload's files), records
// every fault in the run's result with its true start and end, and keeps the marks the observer's
// failover timings are built from. HealAll ends whatever is still active when the faults are over.
//
// Problems (a demote refused, a restart that never came up) are appended to the result's error
// with the scenario file and line, so a run that could not inject what it promised never passes.
#pragma once

#include <optional>
#include <set>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/common/rng.h"
#include "core/common/runtime.h"
#include "harness/real/fake_clock.h"
#include "harness/real/faultfs_mount.h"
#include "harness/real/node_cluster.h"
#include "harness/real/observer.h"
#include "harness/real/etcd_controller.h"
#include "harness/real/redis_controller.h"
#include "harness/real/sentinel_controller.h"
#include "harness/real/link_proxy.h"
#include "harness/run_result.h"
#include "core/meta/meta_indexer.h"
#include "harness/scenario.h"
#include "sim/meta_swap.h"
#include "harness/timeline.h"

namespace kvchaos::harness::real {

class Workload;

// What the faults act on; owned by the run, which outlives the applier.
struct FaultTargets {
  NodeCluster* cluster = nullptr;
  RedisController* coordination_redis = nullptr;  // null unless coordination is Redis
  EtcdController* etcd = nullptr;                 // null unless coordination is etcd
  SentinelController* sentinel = nullptr;         // null unless coordination is redis-sentinel
  // proxies[i]: node i's links to coordination — one to the Redis, one per etcd member, or one per
  // server and sentinel of a redis-sentinel group (the clients' links to nodes: NodeCluster::ClientPath).
  std::vector<std::vector<std::unique_ptr<LinkProxy>>>* proxies = nullptr;
  std::vector<std::unique_ptr<FaultfsMount>>* mounts = nullptr;
  Observer* observer = nullptr;  // its view of the leader is the fallback when no node answers
  Workload* workload = nullptr;  // null when the scenario runs no data plane
  NodeClocks* clocks = nullptr;  // null unless the scenario has clock faults (fake_clock.h)
  std::string meta_index_uri;    // the meta index's redis-server (meta-swap edits it)
};

// The faultfs rule id that follows unsynced writes for store-crash faults.
inline constexpr const char* kPowerLossRuleId = "power-loss";

// Before any store I/O: every mount a store-crash names starts following unsynced writes
// (faultfs drop_unsynced, POSIX's dir_sync rule), so that the crash drops all of them.
Status TrackUnsyncedWrites(const Scenario& s, std::vector<std::unique_ptr<FaultfsMount>>& mounts);

class FaultApplier {
 public:
  // Times are milliseconds since `t0`; restarts wait up to `start_timeout`.
  FaultApplier(const Scenario& scenario, uint64_t seed, FaultTargets targets, MonoTime t0, Duration start_timeout,
               RunResult& result);

  // Step `step_index` of the expanded timeline starts or ends a fault.
  void Start(size_t step_index, const TimelineStep& step);
  void End(const TimelineStep& step);
  // Ends every fault still active: rules cleared and hangs released, Redis back, partitions healed,
  // paused nodes resumed.
  void HealAll();

  // One mark per applied fault (restarts and heals excepted), for the failover report.
  const std::vector<FaultMark>& marks() const { return marks_; }

 private:
  // What a started fault hit, so its end undoes exactly that.
  struct Active {
    std::vector<int> nodes;
    std::vector<FaultfsMount*> mounts;
    std::string rule_id;
    size_t applied_index = 0;  // into RunResult::faults
    std::vector<size_t> mark_indexes;  // into marks_: one per node it hit (or one)
    std::optional<sim::MetaSwap> swap;  // meta-swap: what to put back at the end
  };

  // A proxy a link fault on a node acts on: its link to coordination (the node is the client) or
  // one of the clients' links to its API (the node is the server).
  struct LinkEnd {
    LinkProxy* proxy;
    bool node_is_client;
  };
  // `member` >= 0 (etcd): of its coordination links only the one to that member.
  std::vector<LinkEnd> LinksOf(int node, PartitionFrom from, int member = -1) const;

  double NowMs() const;
  void Fail(const std::string& what);
  int AskLeader();
  std::vector<int> Resolve(const NodeRef& ref, size_t step_index, std::string* target);
  void EndTracked(const Active& a, double end_ms);
  void StartCoordinationBack(const std::string& where);
  // coordination-outage on etcd: every member paused, or one member crashed or paused.
  void StartEtcdOutage(const FaultEvent& f, AppliedFault* applied, FaultMark* mark);
  void EndEtcdOutage(const FaultEvent& f, const std::string& where);
  // clock-jump steps, clock-drift sets the rate of, each node's fake clock; the end of a drift's
  // `for` sets its rate back to true time (a jump stays, as in sim mode).
  void StartClockFault(const FaultEvent& f, const std::vector<int>& nodes, const std::string& where);
  void EndClockFault(const FaultEvent& f, const std::vector<int>& nodes, const std::string& where);

  const Scenario& s_;
  Rng rng_;
  uint64_t seed_;
  FaultTargets t_;
  const MonoTime t0_;
  const Duration start_timeout_;
  RunResult& r_;
  bool redis_down_ = false;  // killed by a coordination outage without persistence
  std::map<std::pair<size_t, int>, Active> active_;  // by (fault index, occurrence)
  std::unique_ptr<meta::MetaIndexer> meta_index_;  // opened at the first meta-swap
  std::set<std::string> swapped_keys_;             // index keys swapped now
  uint64_t meta_swaps_ = 0;
  // Swaps `a`'s records back (meta-swap's end, or the end of the run).
  void EndMetaSwap(Active& a, const std::string& where);
  std::vector<FaultMark> marks_;
};

}  // namespace kvchaos::harness::real
