// Fault schedules of a simulated run: generated from the seed as a chaos phase (faults arrive
// one after another, may overlap, and all end by its close) followed by a quiet phase with no
// faults, in which the cluster must elect a leader again. A fault aimed at "the leader" is
// resolved when it fires, so it hits whoever leads at that moment.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/rng.h"
#include "core/common/status.h"
#include "sim/sim_clock.h"

namespace kvchaos::sim {

enum class FaultKind : uint8_t {
  kCrash = 0,       // node process crash, restarted later
  kPause,           // node frozen (GC pause, SIGSTOP)
  kPartition,       // node <-> backend, one way or both
  kBackendOutage,   // backend unreachable, or down and restarted with its data
  kClock,           // node/backend drift within the bound, node clock steps
  kNet,             // loss, duplication, delay spikes on one link direction (variant = 2 * what + dir;
                    // what 3, more jitter, from scenarios only)
  kSlow,            // node's CPU slow: every wake-up late
  kBackendWipe,     // backend restarted without persistence (opt-in: fencing cannot survive it;
                    // variant 1, from scenarios only: the fenced resource keeps its newest token,
                    // and the new leader raises its token past it: fencing survives that one)
  kBackendClock,    // backend wall-clock steps (opt-in: Redis expiries move with them)
  kStoreFault,      // a faultfs rule on a store mount (opt-in, needs the data plane): `store_rule`
                    // names a scenario's rule, else variant 0 EIO with `probability`, 1 a hang,
                    // 2 latency of `amount` ns with `probability`, 3 a bit flip on reads,
                    // 4 every read misdirected to another block file; `node` is the mount's index
  kStoreCrash,      // power loss of the storage (opt-in): what was not made durable is gone
  // Scenario-only kinds (kvchaos run): never generated, so not counted in kFaultKindCount.
  kDemote,          // admin demote of a node: it ends its term and unlocks, and stays up
  kStop,            // graceful stop (SIGTERM): the elector stops (demote + unlock); restarted later
  kMetaSwap,        // two cached keys of the meta index exchange their records; swapped back at the end
  kCoordinationFailover,  // redis-sentinel: the primary dies and the replica is promoted; with a
                          // duration, replication is cut that long first and the primary dies at its end
};
inline constexpr int kFaultKindCount = 11;  // the kinds the generator draws from
const char* FaultKindName(FaultKind kind);

using FaultMask = uint32_t;
inline constexpr FaultMask FaultBit(FaultKind k) { return FaultMask{1} << static_cast<int>(k); }
// The default set: every kind except the opt-in ones (backend-wipe, backend-clock, and the store
// kinds, which only a world with a data plane can apply).
FaultMask DefaultFaults();
// The store kinds (store-fault, store-crash).
FaultMask StoreFaults();
// "crash,pause,partition,backend-outage,clock,net,slow,backend-wipe,backend-clock", "all",
// "default" or "none"; InvalidArgument names the unknown item and lists the valid ones.
Result<FaultMask> ParseFaultList(std::string_view text);
std::string FaultListString(FaultMask mask);

// What a partition cuts a node off from: the coordination backend; every host that talks to its
// API (the other nodes and the clients: meta clients, the store client, the observer); or both and
// the meta index; or (coordination etcd, no node involved) an etcd member's raft links to the
// other members: `member`, or with -1 the member leading raft when the fault fires.
enum class PartitionPeers { kCoordination, kApiPeers, kAll, kEtcdPeers };

struct FaultAction {
  TrueNs t = 0;
  FaultKind kind = FaultKind::kCrash;
  bool target_leader = false;  // resolved when it fires; `node` is used otherwise
  bool target_follower = false;  // resolved when it fires: the first running node not leading
  int node = 0;
  int64_t duration_ns = 0;
  int variant = 0;
  int64_t amount = 0;  // ppm, ns of a step or of a delay, depending on kind/variant
  double probability = 0;
  int store_rule = -1;  // kStoreFault from a scenario: index into SimConfig::store_rules
  // kPartition: what the node is cut off from.
  PartitionPeers peers = PartitionPeers::kCoordination;
  // coordination etcd: the one member a kBackendOutage (variant 0 crash, 1 pause), kPartition or
  // kNet acts on (only the node's link to it); -1: every member (a kBackendOutage: variant 0 cuts
  // the nodes off, 1 crashes every member, 2 pauses them).
  int member = -1;
};

struct FaultPlanOptions {
  FaultMask kinds = 0;
  int nodes = 3;
  TrueNs chaos_start_ns = 0;
  TrueNs chaos_end_ns = 0;
  int64_t lease_ns = 0;
  int64_t max_drift_ppm = 100;
  int store_mounts = 0;              // mounts a generated store fault may target
  uint32_t store_fault_variants = 0xf;  // bit v: kStoreFault variant v may be drawn
  // Coordination etcd with this many members: outages, partitions and net faults may hit one
  // member, and partitions may cut a member from its peers (drawn from a stream of their own, so
  // the rest of the plan is the one without it).
  int etcd_members = 0;
  // redis-sentinel: one coordination failover in the chaos phase (half the time after a cut of
  // replication), from a stream of its own.
  bool coordination_failover = false;
};

// Ordered by time. Empty when no kind is enabled or the chaos phase is empty.
std::vector<FaultAction> GenerateFaults(Rng rng, const FaultPlanOptions& options);

}  // namespace kvchaos::sim
