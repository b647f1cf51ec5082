// Failover checks of both modes (see the header).
#include "sim/failover_checks.h"

#include <algorithm>
#include <optional>

namespace kvchaos::sim {

LeaseStops CheckLeaseStops(const std::vector<TermSpan>& terms, const std::vector<TermLeaseEnd>& lease_ends,
                           int64_t loop_ns) {
  LeaseStops stops;
  for (const TermSpan& t : terms) {
    const auto lease = std::find_if(lease_ends.begin(), lease_ends.end(), [&t](const TermLeaseEnd& l) {
      return l.node == t.node && l.token == t.token;
    });
    if (lease == lease_ends.end()) continue;
    ++stops.terms_checked;
    const int64_t overrun = t.end_ns - (lease->end_ns - loop_ns);
    if (overrun <= 0) continue;
    ++stops.overruns;
    stops.max_overrun_ns = std::max(stops.max_overrun_ns, overrun);
  }
  return stops;
}

bool HitsNode(FaultScope scope) {
  return scope == FaultScope::kNodeProcess || scope == FaultScope::kNodeCoordination || scope == FaultScope::kNodeClock;
}

namespace {

bool Overlaps(const FaultSpan& f, int64_t from_ns, int64_t to_ns) {
  return f.start_ns <= to_ns && std::max(f.end_ns, f.start_ns) >= from_ns;
}

// The cause of a failover whose old term ended at `stopped_ns` (index into `faults`, -1: none), and
// whether anything in the lease before made it necessary.
int Cause(const std::vector<FaultSpan>& faults, int node, int64_t stopped_ns, const FailoverCheckOptions& o,
          bool* necessary) {
  const int64_t from = stopped_ns - o.lease_ns;
  const int64_t to = stopped_ns + o.observation_lag_ns;
  int on_node = -1;
  int on_coordination = -1;
  *necessary = false;
  for (size_t i = 0; i < faults.size(); ++i) {
    const FaultSpan& f = faults[i];
    if (!Overlaps(f, from, to)) continue;
    const bool first_node = on_node < 0 || f.start_ns < faults[static_cast<size_t>(on_node)].start_ns;
    const bool first_coordination =
        on_coordination < 0 || f.start_ns < faults[static_cast<size_t>(on_coordination)].start_ns;
    if (HitsNode(f.scope) && f.node == node) {
      if (first_node) on_node = static_cast<int>(i);
      *necessary = true;
    } else if (f.scope == FaultScope::kCoordinationState || f.scope == FaultScope::kCoordinationClock) {
      if (first_coordination) on_coordination = static_cast<int>(i);
      *necessary = true;
    } else if (f.scope == FaultScope::kCoordinationOutage) {
      if (first_coordination) on_coordination = static_cast<int>(i);
      // Only an outage the lease cannot outlive makes losing it the backend's fault.
      if (f.end_ns - f.start_ns >= o.lease_ns - o.safety_margin_ns) *necessary = true;
    } else if (f.scope == FaultScope::kCoordinationMember) {
      // The cause, but never a reason: the other members serve, and a client fails over to them.
      if (first_coordination) on_coordination = static_cast<int>(i);
    }
  }
  return on_node >= 0 ? on_node : on_coordination;
}

}  // namespace

FailoverVerdict CheckFailovers(std::vector<TermSpan> terms, const std::vector<LockAcquired>& acquired,
                               const std::vector<FaultSpan>& faults, const FailoverCheckOptions& options) {
  FailoverVerdict v;
  std::sort(terms.begin(), terms.end(), [](const TermSpan& a, const TermSpan& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.node < b.node;
  });
  for (size_t a = 0; a < terms.size(); ++a) {
    for (size_t b = a + 1; b < terms.size() && terms[b].start_ns < terms[a].end_ns; ++b) {
      if (terms[b].node == terms[a].node) continue;
      const int64_t overlap = std::min(terms[a].end_ns, terms[b].end_ns) - terms[b].start_ns;
      if (overlap > 0) {
        ++v.dual_acting_windows;
        v.dual_acting_ns += overlap;
      }
    }
  }

  std::optional<TermSpan> current;
  for (const TermSpan& t : terms) {
    if (!current) {
      current = t;
      continue;
    }
    if (t.node == current->node && t.token == current->token) {
      current->end_ns = std::max(current->end_ns, t.end_ns);  // the same term, seen again
      continue;
    }
    if (t.start_ns < current->end_ns && t.node != current->node) {
      // Overlapping terms are dual acting (counted above), not a handover: follow the newer term.
      if (t.token > current->token) current = t;
      continue;
    }
    Failover e;
    e.from_node = current->node;
    e.to_node = t.node;
    e.from_token = current->token;
    e.to_token = t.token;
    e.same_node = t.node == current->node;
    e.serving_ns = t.start_ns;
    e.old_stopped_ns = current->end_ns;
    bool necessary = false;
    e.fault = Cause(faults, current->node, current->end_ns, options, &necessary);
    if (e.fault >= 0) {
      const FaultSpan& f = faults[static_cast<size_t>(e.fault)];
      e.fault_ns = std::min(f.start_ns, t.start_ns);
      // A crash or pause stopped the old leader when it began (real mode sees its last probe earlier).
      if (f.stops_node && f.node == current->node) e.old_stopped_ns = f.start_ns;
    }
    e.unnecessary = !necessary;
    if (e.unnecessary) ++v.unnecessary;
    for (const LockAcquired& a : acquired) {
      if (a.node == t.node && a.token == t.token && a.at_ns <= t.start_ns) e.lock_acquired_ns = a.at_ns;
    }
    v.failovers.push_back(e);
    current = t;
  }
  return v;
}

}  // namespace kvchaos::sim
