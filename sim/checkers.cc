#include "sim/checkers.h"

#include <algorithm>
#include <cstdlib>

namespace kvchaos::sim {
namespace {

constexpr int64_t kMsNs = 1'000'000;

std::string Ms(int64_t ns) { return std::to_string(ns / kMsNs) + "." + std::to_string((ns % kMsNs) / 100'000) + " ms"; }

// Lock holders are node names "n<index + 1>" (world.cc).
int NodeOfHolder(const std::string& holder) {
  return holder.size() > 1 && holder[0] == 'n' ? std::atoi(holder.c_str() + 1) - 1 : -1;
}

}  // namespace

void CountOverlaps(const std::vector<Interval>& intervals, uint64_t* windows, int64_t* overlap_ns) {
  *windows = 0;
  *overlap_ns = 0;
  std::vector<const Interval*> sorted;
  for (const Interval& i : intervals) {
    if (i.end >= i.start) sorted.push_back(&i);
  }
  std::sort(sorted.begin(), sorted.end(), [](const Interval* a, const Interval* b) {
    return a->start != b->start ? a->start < b->start : a->node < b->node;
  });
  for (size_t i = 0; i < sorted.size(); ++i) {
    for (size_t j = i + 1; j < sorted.size() && sorted[j]->start < sorted[i]->end; ++j) {
      if (sorted[j]->node == sorted[i]->node) continue;
      const int64_t overlap = std::min(sorted[i]->end, sorted[j]->end) - sorted[j]->start;
      if (overlap > 0) {
        ++*windows;
        *overlap_ns += overlap;
      }
    }
  }
}

FaultScope ScopeOf(const FaultRecord& f) {
  // One etcd member down or cut from the node: the others keep a quorum and the client moves on.
  const bool member_fault = f.kind == FaultKind::kBackendOutage || f.kind == FaultKind::kPartition || f.kind == FaultKind::kNet;
  if (f.member >= 0 && member_fault) return FaultScope::kCoordinationMember;
  switch (f.kind) {
    case FaultKind::kCrash:
    case FaultKind::kPause:
    case FaultKind::kSlow:
    case FaultKind::kDemote:
    case FaultKind::kStop:
      return FaultScope::kNodeProcess;
    case FaultKind::kPartition:
    case FaultKind::kNet:
      // Cut from (or slow to) its API peers only, the node still leads as it should: a failover is
      // unnecessary.
      return f.peers == PartitionPeers::kApiPeers ? FaultScope::kNodePeers : FaultScope::kNodeCoordination;
    case FaultKind::kClock:
      // Variants 1 and 4 drift or slew the backend's clock within what the margin covers.
      return f.variant == 1 || f.variant == 4 ? FaultScope::kCoordinationDrift : FaultScope::kNodeClock;
    case FaultKind::kBackendOutage:
      return FaultScope::kCoordinationOutage;
    case FaultKind::kCoordinationFailover:
      // In sync (variant 0) the promotion is an outage; after a replication cut (1) the promoted
      // replica lost state, as real mode marks them.
      return f.variant == 1 ? FaultScope::kCoordinationState : FaultScope::kCoordinationOutage;
    case FaultKind::kBackendWipe:
      return FaultScope::kCoordinationState;
    case FaultKind::kBackendClock:
      return FaultScope::kCoordinationClock;
    case FaultKind::kStoreFault:
    case FaultKind::kStoreCrash:
    case FaultKind::kMetaSwap:
      return FaultScope::kStore;
  }
  return FaultScope::kStore;
}

void RunCheckers(const Records& records, const CheckerOptions& options, SimResult& result) {
  CountOverlaps(records.acting, &result.dual_acting_windows, &result.dual_acting_ns);
  CountOverlaps(records.believing, &result.dual_believing_windows, &result.dual_believing_ns);
  // (CheckFailovers counts the same acting overlaps; the simulator reports them from here.)
  if (result.dual_acting_windows > 0) {
    result.Violate(ViolationKind::kDualActing, std::to_string(result.dual_acting_windows) +
                                " dual-acting window(s): two nodes accepted data-plane writes at the same true time (" +
                                Ms(result.dual_acting_ns) + " in all)");
  }

  // Failovers, their causes and which were unnecessary: the checks both modes share.
  std::vector<TermSpan> terms;
  for (const Interval& i : records.acting) terms.push_back(TermSpan{i.node, i.token, i.start, i.end});
  std::vector<LockAcquired> acquired;
  for (const GrantRecord& g : records.grants) {
    acquired.push_back(LockAcquired{g.t, NodeOfHolder(g.holder), g.token});
  }
  std::vector<FaultSpan> faults;
  for (const FaultRecord& f : records.faults) {
    const FaultScope scope = ScopeOf(f);
    faults.push_back(FaultSpan{f.start, std::max(f.end, f.start), scope, HitsNode(scope) ? f.node : -1,
                               FaultKindName(f.kind), f.kind == FaultKind::kCrash || f.kind == FaultKind::kPause});
  }
  const FailoverVerdict verdict =
      CheckFailovers(terms, acquired, faults, FailoverCheckOptions{options.lease_ns, options.safety_margin_ns});
  for (const Failover& f : verdict.failovers) {
    FailoverEvent e;
    e.from_node = f.from_node;
    e.to_node = f.to_node;
    e.old_stopped_ns = f.old_stopped_ns;
    e.lock_acquired_ns = f.lock_acquired_ns;
    e.serving_ns = f.serving_ns;
    e.cause = f.fault >= 0 ? faults[static_cast<size_t>(f.fault)].fault_class : "none";
    e.fault_ns = f.fault_ns;
    e.unnecessary = f.unnecessary;
    result.failovers.push_back(e);
  }
  result.unnecessary_failovers += verdict.unnecessary;

  // Each term stops acting one loop before its lease ends in the backend, not merely before
  // another node acts.
  std::vector<TermSpan> last_writes;
  for (const Interval& i : records.acting) last_writes.push_back(TermSpan{i.node, i.token, i.start, i.last_true});
  std::vector<TermLeaseEnd> lease_ends;
  for (const auto& [holding, end] : records.lease_ends) {
    lease_ends.push_back(TermLeaseEnd{NodeOfHolder(holding.holder), holding.token, end});
  }
  const LeaseStops stops = CheckLeaseStops(last_writes, lease_ends, options.loop_ns);
  result.lease_terms_checked = stops.terms_checked;
  result.lease_overruns = stops.overruns;
  result.max_lease_overrun_ns = stops.max_overrun_ns;

  // Liveness: someone serves within the bound after the quiet phase starts, and at the end.
  const TrueNs quiet = options.quiet_start_ns;
  for (const Interval& i : records.acting) {
    if (i.end < quiet) continue;
    const int64_t after = std::max<int64_t>(0, i.start - quiet);
    if (result.leader_after_quiet_ns < 0 || after < result.leader_after_quiet_ns) result.leader_after_quiet_ns = after;
  }
  if (quiet + options.liveness_bound_ns <= records.end_ns) {
    if (result.leader_after_quiet_ns < 0 || result.leader_after_quiet_ns > options.liveness_bound_ns) {
      result.Violate(ViolationKind::kLiveness, "liveness: no leader served within " + Ms(options.liveness_bound_ns) +
                                  " after the quiet phase started at " + Ms(quiet));
    } else {
      bool at_end = false;
      for (const Interval& i : records.acting) {
        if (i.start < records.end_ns && i.end >= records.end_ns - kMsNs) at_end = true;
      }
      if (!at_end) result.Violate(ViolationKind::kLiveness, "liveness: no leader was serving at the end of the run");
    }
  }
}

}  // namespace kvchaos::sim
