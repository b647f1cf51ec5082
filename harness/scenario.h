// The typed scenario model: what a scenario file (scenarios/*.yaml, schema in scenarios/schema.json)
// says, after validation, with every duration and size parsed into units. The runner and the
// simulator consume this, never the YAML: a Scenario that exists has passed the schema and the
// checks of scenario_checks.h, so consumers need not re-check ranges or references.
//
// Node faults name their target with a NodeRef: a fixed index, or leader/follower/all resolved
// when the fault fires. Times are offsets from the start of the run in true (not node) time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/runtime.h"

namespace kvchaos::harness {

enum class RunMode { kSim, kReal };
// etcd: a 3-member etcd cluster (real mode only: the simulator has no quorum model yet);
// redis-sentinel: a primary, its replica and 3 sentinels (in sim: sim/sim_sentinel.h).
enum class CoordinationKind { kMemory, kFile, kRedis, kSimRedis, kEtcd, kRedisSentinel };
inline constexpr int kEtcdMembers = 3;

std::string_view RunModeName(RunMode mode);
std::string_view CoordinationKindName(CoordinationKind kind);

struct StoreBackend {
  std::string name;
  bool faultfs = false;  // the backend directory sits behind a faultfs mount
};

struct Topology {
  int nodes = 0;
  Duration lease{};
  Duration loop_interval{};
  CoordinationKind coordination = CoordinationKind::kSimRedis;
  std::vector<StoreBackend> backends;
  bool durable_commit = false;  // the workload's store option durable_commit
  bool inline_header = false;   // the workload's storage writes inline block headers (plan B)
  // The elector and coordination-client settings a user tunes, applied alike in both modes (sim:
  // SimConfig; real: each node's config and coordination URI). Unset: the production defaults, as
  // a node whose config leaves them out runs (client timeout 1000 ms and 2 retries, the elector's
  // default margin of drift + one loop, no campaign cool-down after a demote).
  std::optional<Duration> coordination_timeout;  // per attempt of a coordination call
  std::optional<int> coordination_retries;       // extra attempts after a timeout or connection error
  std::optional<Duration> safety_margin;         // subtracted from every lease deadline
  std::optional<Duration> forbid_campaign;       // a demoted node's cool-down before it campaigns
};

// Data-plane load. Rates are per second of true time; zero rates mean no data plane.
struct Workload {
  double save_rate_per_s = 0;
  double load_rate_per_s = 0;
  uint64_t block_size_bytes = 64 * 1024;
  int64_t key_space = 1024;
  int clients = 1;
};

enum class FaultAction {
  kCrash,               // SIGKILL the node (sim: the node's threads vanish)
  kStop,                // graceful stop: SIGTERM, a leader demotes and releases its lock first
  kRestart,             // start a node that is down again
  kPause,               // freeze the process (SIGSTOP; the GC-pause case)
  kResume,              // unfreeze a paused node
  kDemote,              // the admin API asks the node to step down; it stays up
  kPartition,           // cut a node off from the coordination backend and/or the other nodes
  kHeal,                // remove every partition
  kCoordinationOutage,  // the coordination backend stops answering (or one etcd member crashes)
  kCoordinationFailover,  // redis-sentinel: the primary dies and the sentinels promote its replica
  kClockDrift,          // a clock runs fast or slow by `ppm`
  kClockJump,           // a clock steps by `jump` (forward or backward)
  kStoreFault,          // a faultfs rule on a store backend
  kStoreCrash,          // power loss of a faultfs backend's storage: what was not made durable is gone
  kNetwork,             // loss, duplication or extra delay on a node's messages (sim)
  kSlow,                // a node's CPU is slow: every wake-up comes `slow_wakeup_delay` late (sim)
  kMetaSwap,            // two keys of the meta index exchange their records (cache locations)
};
std::string_view FaultActionName(FaultAction action);
bool FaultActionFromName(std::string_view name, FaultAction* action);

struct NodeRef {
  enum class Kind { kIndex, kLeader, kFollower, kAll, kCoordination };
  Kind kind = Kind::kIndex;
  int index = 0;  // only for kIndex

  static NodeRef Index(int i) { return {Kind::kIndex, i}; }
  static NodeRef Of(Kind kind) { return {kind, 0}; }
  // "2", "leader", "follower", "all", "coordination".
  std::string ToString() const;
  friend bool operator==(const NodeRef&, const NodeRef&) = default;
};

// kPeers (sim, coordination etcd): no node; etcd member `member` is cut from the other members.
enum class PartitionFrom { kCoordination, kNodes, kAll, kPeers };
enum class PartitionDirection { kBoth, kInbound, kOutbound };
std::string_view PartitionFromName(PartitionFrom from);
std::string_view PartitionDirectionName(PartitionDirection direction);

// One faultfs rule. Exactly one effect is set: an errno, a latency, bit flips on reads, or a hang.
struct StoreFaultRule {
  std::vector<std::string> ops;  // empty: every operation
  double probability = 1.0;
  std::string errno_name;        // "EIO", … ; empty when the effect is not an errno
  int errno_value = 0;
  std::optional<Duration> latency;
  int bit_flips = 0;
  bool hang = false;
  bool misdirected_read = false;  // reads served from another block file's bytes
  std::string source;             // misdirected_read: glob of those files (empty: every block file)
};

// The faultfs rule of a store fault with id `id`, in the shape of a rules file entry (and of the
// control protocol's "add"): what real mode sends to a faultfs mount and sim mode parses for its
// simulated mounts, so both modes apply the same rule.
nlohmann::json StoreFaultRuleJson(const std::string& id, const StoreFaultRule& rule);

struct FaultEvent {
  FaultAction action = FaultAction::kCrash;
  std::string fault_class;   // what reports group failovers by; defaults to the action name
  Duration at{};             // first start
  std::optional<Duration> every;   // repeat period
  std::optional<Duration> length;  // `for`: the fault ends (heals) this long after each start
  std::optional<Duration> until;   // repeats start before this time (default: the end of the run)

  NodeRef node;                                              // node and clock faults
  PartitionFrom partition_from = PartitionFrom::kCoordination;
  PartitionDirection partition_direction = PartitionDirection::kBoth;  // partition and network
  bool partition_reset = false;  // partition (real): connections are reset, not left hanging
  bool persistence = true;                                   // coordination-outage
  int coordination_member = -1;                              // coordination-outage (etcd): one member; -1 all
  std::optional<bool> member_pause;                          // ... `how`: paused (true) or crashed (false)
  double drift_ppm = 0;                                      // clock-drift
  Duration jump{};                                           // clock-jump, signed
  double net_loss = 0;                                       // network: chance a message is lost
  double net_duplication = 0;                                // network: chance it arrives twice
  Duration net_delay{};                                      // network: added to every message
  Duration net_jitter{};                                     // network: a further uniform [0, jitter]
  uint64_t net_bandwidth = 0;                                // network (real): bytes per second, 0 = no cap
  Duration slow_wakeup_delay{};                              // slow
  std::string backend;                                       // store-fault, store-crash: a name or "all"
  StoreFaultRule rule;                                       // store-fault

  int line = 0;  // 1-based line of the event in its file, for messages at run time
};

// Bounds on a set of failovers: the run's (`expect`), or one fault class's (`expect.classes.X`).
struct FailoverBounds {
  std::optional<int64_t> failover_p99_ms;
  std::optional<int64_t> failover_min_ms;  // no failover may be faster (e.g. lease - loop for a crash)
  // How many failovers the set must have (`failovers: {min, max}`). A time bound with no failover
  // to time fails unless min is set to 0.
  std::optional<int64_t> failovers_min;
  std::optional<int64_t> failovers_max;
  // How many of them may be re-elections of the node that had led (`reelections: {min, max}`).
  std::optional<int64_t> reelections_min;
  std::optional<int64_t> reelections_max;
  // The data plane's gap per failover: the old leader's last accepted write to the new leader's
  // first (FailoverEvent::unavailable_ms).
  std::optional<int64_t> unavailable_p99_ms;
  std::optional<int64_t> unavailable_max_ms;
  bool any() const;
};

struct Expectations : FailoverBounds {
  bool no_stale_writes = true;
  bool no_corrupt_reads = true;
  bool acked_blocks_readable = true;
  bool no_dual_acting = true;
  bool no_unnecessary_failover = false;
  // Every term accepts its last write at least one loop before its lease ends in the coordination
  // backend (the elector's margin covers a loop plus drift): a check of the lease itself, which
  // fails before dual acting can happen.
  bool leader_stops_by_lease_end = false;
  // The history of the data plane's meta calls (docs/history.md): linearizable key by key, and the
  // cheap invariants. Judged where the run checked a history.
  bool linearizable = true;
  bool no_lost_writes = true;
  bool monotonic_reads = true;
  bool read_your_writes = true;
  // Per fault class (`classes: {crash: {failover_p99_ms: …}}`): the bounds apply to the failovers
  // of that class only, since one run mixes crashes (lease + loop) with pauses and outages (longer).
  std::map<std::string, FailoverBounds> classes;
  // Data-plane errors allowed per status code name (`max_errors: {StoreUnhealthy: 0}`).
  std::map<std::string, int64_t> max_errors;
  // A leader serves within this long after each fault ends (unless the next fault starts sooner),
  // and after the last one.
  std::optional<int64_t> leader_within_ms;
  int64_t min_ops = 0;
  // At least this many Loads are reported as misrouted reads (inline headers on): the chaos of a
  // misdirected-read or meta-swap scenario reached the client's header check.
  int64_t min_misrouted_reads = 0;
};

struct Incident {
  std::string summary;
  std::string symptom;
  std::string cause;
  std::string guards;
  std::vector<std::string> references;
};

struct Scenario {
  std::string file;  // the path it was loaded from (as given), for repro commands
  std::string name;
  std::string description;
  std::optional<Incident> incident;
  RunMode mode = RunMode::kSim;
  // `mode: both`: the file runs in each mode (ModeVariants); `mode` says which this copy is.
  bool both_modes = false;
  uint64_t seed = 1;  // default seed; a run's --seed overrides it
  Duration duration{};
  Topology topology;
  Workload workload;
  std::vector<FaultEvent> faults;  // in file order
  Expectations expect;
};

// The runs a file stands for: itself, or for `mode: both` a sim copy and a real copy. The file's
// coordination `redis` (also its default) is the simulator's Redis in the sim copy.
std::vector<Scenario> ModeVariants(const Scenario& scenario);

}  // namespace kvchaos::harness
