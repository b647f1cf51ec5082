// Failover checks, one definition for both modes: the simulator (sim/checkers.cc, from its exact
// records) and real mode (harness/real, from what its observer saw) hand over the same history —
// the terms nodes acted in, the lock grants, the faults with what they hit — and get the same
// verdicts back:
//
//  - dual acting: two nodes' acting spans overlap in time (counted per overlapping pair);
//  - a failover: consecutive terms that do not overlap, of another node or another token of the
//    same node (a re-election); overlapping terms are dual acting, not a handover;
//  - its cause: the *first* fault that hit the old leader (its process, its path to coordination,
//    its clock) in the lease before it stopped acting; failing that, the first coordination fault in
//    that window; the failover is timed from that fault's start, and a fault that stops the node
//    (crash, pause) is when the old leader stopped;
//  - unnecessary: the old leader's process and its path to coordination were healthy during that
//    lease — no fault hit them, coordination kept its state and clock, and no coordination outage of
//    at least lease − safety margin overlapped it (a shorter outage must not move leadership: the
//    lease outlives it).
// Times are nanoseconds on one timeline (true time in sim, the runner's monotonic clock in real).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvchaos::sim {

// A span in which `node` acted as leader of the term with `token` (accepted data-plane calls).
struct TermSpan {
  int node = -1;
  uint64_t token = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct LockAcquired {
  int64_t at_ns = 0;
  int node = -1;
  uint64_t token = 0;
};

// What a fault hit, as far as leadership is concerned.
enum class FaultScope : uint8_t {
  kNodeProcess,        // crash, stop, pause, slow CPU, demote
  kNodeCoordination,   // the node's path to coordination: partition, loss, delay
  kNodeClock,          // the node's clock: drift, steps
  kNodePeers,          // the node's links to other nodes and clients only
  kCoordinationOutage, // the backend unreachable or down (state kept)
  kCoordinationState,  // the backend lost its state (restarted empty)
  kCoordinationClock,  // the backend's clock stepped (its lock expiries moved)
  kCoordinationDrift,  // the backend's clock drifted within the bound the safety margin covers
  kCoordinationMember, // one member of a replicated backend down; the others keep a quorum and serve
  kStore,              // store paths and storage: nothing to do with leadership
};
bool HitsNode(FaultScope scope);

struct FaultSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // == start_ns for a one-off (a demote, a power loss)
  FaultScope scope = FaultScope::kNodeProcess;
  int node = -1;       // the node it hit (node scopes); -1 otherwise
  std::string fault_class;
  bool stops_node = false;  // crash, pause: the node stopped acting when it began
};

struct FailoverCheckOptions {
  int64_t lease_ns = 0;
  int64_t safety_margin_ns = 0;
  // How late the history may see a term end: the simulator knows it exactly (0); real mode's
  // observer sees a node's last accepted probe, up to a few poll periods before it really stopped,
  // so a fault that far after a term's last sighting still counts as within its lease.
  int64_t observation_lag_ns = 0;
};

struct Failover {
  int from_node = -1;
  int to_node = -1;
  uint64_t from_token = 0;
  uint64_t to_token = 0;
  int64_t old_stopped_ns = 0;    // the old term's end (a stopping fault's start when it stopped it)
  int64_t lock_acquired_ns = -1; // the new term's lock grant, when seen
  int64_t serving_ns = 0;        // the new term's first acting moment
  int fault = -1;                // index into the faults of its cause; -1: none
  int64_t fault_ns = -1;         // that fault's start (-1: none)
  bool same_node = false;        // re-election of the same node (another token)
  bool unnecessary = false;
};

struct FailoverVerdict {
  std::vector<Failover> failovers;
  uint64_t dual_acting_windows = 0;
  int64_t dual_acting_ns = 0;
  uint64_t unnecessary = 0;
};

// Where a term's lease ends in the coordination backend (its last grant or renewal's expiry).
struct TermLeaseEnd {
  int node = -1;
  uint64_t token = 0;
  int64_t end_ns = 0;
};

struct LeaseStops {
  uint64_t terms_checked = 0;  // terms whose lease end is known
  uint64_t overruns = 0;       // of them, those whose last accepted write came after lease end − loop
  int64_t max_overrun_ns = 0;
};

// Each term (its TermSpan::end_ns: the last accepted write) against its lease end: the elector's
// margin is at least a loop plus the clocks' drift, so a term stops a loop before its lease ends.
LeaseStops CheckLeaseStops(const std::vector<TermSpan>& terms, const std::vector<TermLeaseEnd>& lease_ends,
                           int64_t loop_ns);

FailoverVerdict CheckFailovers(std::vector<TermSpan> terms, const std::vector<LockAcquired>& acquired,
                               const std::vector<FaultSpan>& faults, const FailoverCheckOptions& options);

}  // namespace kvchaos::sim
