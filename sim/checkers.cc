#include "sim/checkers.h"

#include <algorithm>

namespace kvchaos::sim {
namespace {

constexpr int64_t kMsNs = 1'000'000;

std::string Ms(int64_t ns) { return std::to_string(ns / kMsNs) + "." + std::to_string((ns % kMsNs) / 100'000) + " ms"; }

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

bool FaultHitsNode(const FaultRecord& f, int node) {
  if (f.node != node) return false;
  switch (f.kind) {
    case FaultKind::kCrash:
    case FaultKind::kPause:
    case FaultKind::kPartition:
    case FaultKind::kNet:
    case FaultKind::kSlow:
    case FaultKind::kDemote:
    case FaultKind::kStop:
      return true;
    case FaultKind::kClock:
      return f.variant != 1 && f.variant != 4;  // variants 1 and 4 move the backend's clock
    default:
      return false;
  }
}

void RunCheckers(const Records& records, const CheckerOptions& options, SimResult& result) {
  CountOverlaps(records.acting, &result.dual_acting_windows, &result.dual_acting_ns);
  CountOverlaps(records.believing, &result.dual_believing_windows, &result.dual_believing_ns);
  if (result.dual_acting_windows > 0) {
    result.violations.push_back(std::to_string(result.dual_acting_windows) +
                                " dual-acting window(s): two nodes accepted data-plane writes at the same true time (" +
                                Ms(result.dual_acting_ns) + " in all)");
  }

  // Failovers: consecutive terms (by start) of different nodes or tokens.
  std::vector<const Interval*> terms;
  for (const Interval& i : records.acting) terms.push_back(&i);
  std::sort(terms.begin(), terms.end(), [](const Interval* a, const Interval* b) {
    return a->start != b->start ? a->start < b->start : a->node < b->node;
  });
  for (size_t k = 1; k < terms.size(); ++k) {
    const Interval& old_term = *terms[k - 1];
    const Interval& new_term = *terms[k];
    if (old_term.node == new_term.node && old_term.token == new_term.token) continue;
    FailoverEvent e;
    e.from_node = old_term.node;
    e.to_node = new_term.node;
    e.old_stopped_ns = old_term.end;
    e.serving_ns = new_term.start;
    const std::string holder = "n" + std::to_string(new_term.node + 1);
    for (const GrantRecord& g : records.grants) {
      if (g.token == new_term.token && g.holder == holder && g.t <= new_term.start) e.lock_acquired_ns = g.t;
    }
    // The cause: the latest fault on the old leader during the lease before it stopped.
    const FaultRecord* cause = nullptr;
    const FaultRecord* backend_cause = nullptr;
    for (const FaultRecord& f : records.faults) {  // chronological: the last match is the latest
      if (f.start > old_term.end || std::max(f.end, f.start) < old_term.end - options.lease_ns) continue;
      if (FaultHitsNode(f, old_term.node)) {
        cause = &f;
      } else if (!FaultHitsNode(f, f.node)) {
        // Backend outage, wipe or clock: the old leader itself was healthy. An outage explains a
        // lost lease better than a clock correction that happened to fall in the same window.
        auto is_outage = [](const FaultRecord& r) {
          return r.kind == FaultKind::kBackendOutage || r.kind == FaultKind::kBackendWipe;
        };
        if (is_outage(f) || backend_cause == nullptr || !is_outage(*backend_cause)) backend_cause = &f;
      }
    }
    const FaultRecord* shown = cause ? cause : backend_cause;
    e.cause = shown ? FaultKindName(shown->kind) : "none";
    e.fault_ns = shown ? shown->start : -1;
    e.unnecessary = cause == nullptr;
    if (e.unnecessary) ++result.unnecessary_failovers;
    result.failovers.push_back(e);
  }

  // Liveness: someone serves within the bound after the quiet phase starts, and at the end.
  const TrueNs quiet = options.quiet_start_ns;
  for (const Interval& i : records.acting) {
    if (i.end < quiet) continue;
    const int64_t after = std::max<int64_t>(0, i.start - quiet);
    if (result.leader_after_quiet_ns < 0 || after < result.leader_after_quiet_ns) result.leader_after_quiet_ns = after;
  }
  if (quiet + options.liveness_bound_ns <= records.end_ns) {
    if (result.leader_after_quiet_ns < 0 || result.leader_after_quiet_ns > options.liveness_bound_ns) {
      result.violations.push_back("liveness: no leader served within " + Ms(options.liveness_bound_ns) +
                                  " after the quiet phase started at " + Ms(quiet));
    } else {
      bool at_end = false;
      for (const Interval& i : records.acting) {
        if (i.start < records.end_ns && i.end >= records.end_ns - kMsNs) at_end = true;
      }
      if (!at_end) result.violations.push_back("liveness: no leader was serving at the end of the run");
    }
  }
}

}  // namespace kvchaos::sim
