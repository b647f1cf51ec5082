// Expectation verdicts of a run; see runner_expectations.h.
#include "harness/runner_expectations.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kvchaos::harness {
namespace {

std::string FormatMs(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f ms", ms);
  return buf;
}

void Add(RunResult& result, std::string name, bool passed, std::string detail) {
  result.verdicts.push_back(InvariantVerdict{std::move(name), passed, std::move(detail)});
}

bool InRange(int64_t n, std::optional<int64_t> min, std::optional<int64_t> max) {
  return n >= min.value_or(0) && n <= max.value_or(std::numeric_limits<int64_t>::max());
}

// "1..2", "0..3", "2 or more".
std::string RangeText(std::optional<int64_t> min, std::optional<int64_t> max) {
  return std::to_string(min.value_or(0)) + (max ? ".." + std::to_string(*max) : " or more");
}

// Nearest-rank percentile of `ms`; 0 for none.
double PercentileOf(std::vector<double> ms, double p) {
  if (ms.empty()) return 0;
  std::sort(ms.begin(), ms.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(ms.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return ms[std::min(index, ms.size() - 1)];
}

// The verdicts of `b` over `failovers`: the run's (`fault_class` empty, verdicts named by their key)
// or one class's (named "classes.CLASS.key").
void EvaluateBounds(const FailoverBounds& b, const std::vector<FailoverEvent>& failovers, const std::string& fault_class,
                    RunResult& result) {
  const int64_t count = static_cast<int64_t>(failovers.size());
  const int64_t reelections = CountReelections(failovers);
  const std::string prefix = fault_class.empty() ? "" : "classes." + fault_class + ".";
  const std::string of_class = fault_class.empty() ? "" : " of class " + fault_class;
  const std::string what = " failover(s)" + of_class;
  if (b.failovers_min || b.failovers_max) {
    const std::string of_which = reelections > 0 ? " (" + std::to_string(reelections) + " re-election(s))" : "";
    Add(result, prefix + "failovers", InRange(count, b.failovers_min, b.failovers_max),
        std::to_string(count) + what + of_which + ", expected " + RangeText(b.failovers_min, b.failovers_max));
  }
  if (b.reelections_min || b.reelections_max) {
    Add(result, prefix + "reelections", InRange(reelections, b.reelections_min, b.reelections_max),
        std::to_string(reelections) + " re-election(s) of " + std::to_string(count) + what + ", expected " +
            RangeText(b.reelections_min, b.reelections_max));
  }
  // A time bound with nothing to time passes only where the scenario allows no failover at all.
  const bool none_allowed = b.failovers_min == 0;
  const auto bound = [&](const char* key, std::optional<int64_t> limit, bool is_floor, const char* stat,
                         double (FailoverEvent::*measure)() const, double p) {
    if (!limit) return;
    const double ms_bound = static_cast<double>(*limit);
    if (failovers.empty()) {
      Add(result, prefix + key, none_allowed,
          "no failovers" + of_class + " to time (bound " + FormatMs(ms_bound) +
              (none_allowed ? "; failovers.min is 0)" : ")"));
      return;
    }
    std::vector<double> ms;
    for (const FailoverEvent& f : failovers) ms.push_back((f.*measure)());
    const double value = PercentileOf(std::move(ms), p);
    const bool ok = is_floor ? value >= ms_bound : value <= ms_bound;
    Add(result, prefix + key, ok,
        std::string(stat) + " " + FormatMs(value) + (ok ? (is_floor ? " >= " : " <= ") : (is_floor ? " < " : " > ")) +
            FormatMs(ms_bound) + " over " + std::to_string(count) + what);
  };
  bound("failover_min_ms", b.failover_min_ms, true, "fastest", &FailoverEvent::failover_ms, 0);
  bound("failover_p99_ms", b.failover_p99_ms, false, "p99", &FailoverEvent::failover_ms, 99);
  bound("unavailable_p99_ms", b.unavailable_p99_ms, false, "unavailable p99", &FailoverEvent::unavailable_ms, 99);
  bound("unavailable_max_ms", b.unavailable_max_ms, false, "unavailable max", &FailoverEvent::unavailable_ms, 100);
}

// "a leader serves within `bound_ms` after each fault ends", from the run's faults and acting spans
// (the same rule for both modes). Faults whose gaps are shorter than the bound form one window:
// the next fault may keep the cluster leaderless. A window whose end the run did not watch for
// `bound_ms` is left to the mode's own end-of-run check. Empty when every window had a leader.
std::string LeaderAfterEachFault(const RunResult& r, double bound_ms) {
  struct Window {
    double start, end;
    const AppliedFault* last;  // the fault that ends it
  };
  std::vector<const AppliedFault*> faults;
  for (const AppliedFault& f : r.faults) faults.push_back(&f);
  std::sort(faults.begin(), faults.end(), [](const AppliedFault* a, const AppliedFault* b) { return a->start_ms < b->start_ms; });
  std::vector<Window> windows;
  for (const AppliedFault* f : faults) {
    const double end = f->end_ms.value_or(f->start_ms);  // a one-off (a crash for good, a demote) ends as it starts
    if (!windows.empty() && f->start_ms < windows.back().end + bound_ms) {
      if (end >= windows.back().end) windows.back() = Window{windows.back().start, end, f};
      continue;
    }
    windows.push_back(Window{f->start_ms, end, f});
  }
  for (const Window& w : windows) {
    if (w.end + bound_ms > r.duration_ms) continue;
    const bool served = std::any_of(r.leadership.begin(), r.leadership.end(), [&](const LeadershipSpan& s) {
      return s.acting && s.end_ms >= w.end && s.start_ms <= w.end + bound_ms;
    });
    if (!served) {
      return "no node accepted writes within " + FormatMs(bound_ms) + " after the " + w.last->fault_class + " fault (" +
             w.last->target + ") ended at " + FormatMs(w.end);
    }
  }
  return "";
}

// The history expectations, from the run's check of its meta calls.
void EvaluateHistory(const Expectations& expect, const HistoryResult& h, RunResult& result) {
  // No host time here (it is history.check_ms): a verdict reads the same on every rerun of a seed.
  const std::string checked = std::to_string(h.operations) + " ops over " + std::to_string(h.keys) + " keys";
  if (expect.linearizable) {
    std::string detail = h.verdict + ": " + checked;
    if (h.keys_not_linearizable > 0) detail += "; " + std::to_string(h.keys_not_linearizable) + " key(s) not linearizable";
    if (h.keys_unknown_budget > 0) detail += "; " + std::to_string(h.keys_unknown_budget) + " key(s) past the search budget";
    if (h.verdict != "linearizable" && !h.first_anomaly.empty()) detail += "; " + h.first_anomaly;
    Add(result, "linearizable", h.verdict == "linearizable", detail);
  }
  // The invariants' own findings are in first_anomaly when no key failed the search.
  auto invariant = [&](bool wanted, const char* name, int64_t findings, const char* what) {
    if (!wanted) return;
    std::string detail = std::string(what) + ": " + std::to_string(findings);
    if (findings > 0 && h.first_anomaly.starts_with(name)) detail += "; " + h.first_anomaly;
    Add(result, name, findings == 0, detail);
  };
  invariant(expect.no_lost_writes, "no_lost_writes", h.lost_writes, "acknowledged writes lost");
  invariant(expect.monotonic_reads, "monotonic_reads", h.non_monotonic_reads, "reads going back");
  invariant(expect.read_your_writes, "read_your_writes", h.read_your_writes, "own writes missed");
}

}  // namespace

double FailoverPercentileMs(const std::vector<FailoverEvent>& failovers, double p) {
  std::vector<double> ms;
  for (const FailoverEvent& f : failovers) ms.push_back(f.failover_ms());
  return PercentileOf(std::move(ms), p);
}

void EvaluateExpectations(const Expectations& expect, const Observed& observed, RunResult& result) {
  const RunCounters& c = result.counters;
  if (expect.no_stale_writes) {
    // A token regression alone (Redis restarted empty hands out smaller tokens) is not a stale
    // write: the fence must reject those tokens, and a rejected write is the fence doing its job.
    Add(result, "no_stale_writes", c.stale_writes_accepted == 0,
        "stale writes accepted: " + std::to_string(c.stale_writes_accepted) +
            ", rejected: " + std::to_string(c.stale_writes_rejected) +
            ", token regressions: " + std::to_string(c.token_regressions));
  }
  if (expect.no_dual_acting) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "dual-acting windows: %lld (%.1f ms)", static_cast<long long>(c.dual_acting_windows),
                  c.dual_acting_ms);
    Add(result, "no_dual_acting", c.dual_acting_windows == 0, buf);
  }
  if (observed.store && expect.no_corrupt_reads) {
    Add(result, "no_corrupt_reads", c.corrupt_reads_returned == 0,
        "corrupt reads returned as good: " + std::to_string(c.corrupt_reads_returned) +
            ", detected: " + std::to_string(c.corrupt_reads_detected));
  }
  if (observed.store && expect.acked_blocks_readable) {
    Add(result, "acked_blocks_readable", c.acked_blocks_unreadable == 0,
        "unreadable acknowledged blocks: " + std::to_string(c.acked_blocks_unreadable) + " of " +
            std::to_string(c.acked_blocks));
  }
  if (result.history) EvaluateHistory(expect, *result.history, result);
  if (expect.leader_stops_by_lease_end && observed.lease_ends) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "terms that accepted a write later than lease end - loop: %lld of %lld",
                  static_cast<long long>(c.lease_overruns), static_cast<long long>(c.lease_terms_checked));
    std::string detail = buf;
    if (c.lease_overruns > 0) {
      std::snprintf(buf, sizeof buf, ", by up to %.1f ms", c.lease_overrun_max_ms);
      detail += buf;
    }
    if (c.lease_terms_checked == 0) detail += " (no term's lease end was known: nothing was checked)";
    Add(result, "leader_stops_by_lease_end", c.lease_overruns == 0 && c.lease_terms_checked > 0, detail);
  }
  if (expect.no_unnecessary_failover) {
    Add(result, "no_unnecessary_failover", c.unnecessary_failovers == 0,
        "unnecessary failovers: " + std::to_string(c.unnecessary_failovers) + " of " + std::to_string(c.failovers));
  }
  EvaluateBounds(expect, result.failovers, /*fault_class=*/"", result);
  for (const auto& [name, bounds] : expect.classes) {
    std::vector<FailoverEvent> of_class;
    for (const FailoverEvent& f : result.failovers) {
      if (f.fault_class == name) of_class.push_back(f);
    }
    EvaluateBounds(bounds, of_class, name, result);
  }
  if (expect.leader_within_ms && observed.liveness_checked) {
    const double bound = static_cast<double>(*expect.leader_within_ms);
    std::string problem = observed.liveness_problem;
    if (problem.empty() && observed.leader_after_each_fault) problem = LeaderAfterEachFault(result, bound);
    Add(result, "leader_within_ms", problem.empty(),
        problem.empty() ? "a leader served within " + FormatMs(bound) +
                              (observed.leader_after_each_fault ? " after each fault and once faults stopped" : " once faults stopped")
                        : problem);
  }
  if (!expect.max_errors.empty() && observed.store) {
    std::string detail;
    bool ok = true;
    for (const auto& [code, allowed] : expect.max_errors) {
      int64_t seen = 0;
      if (result.data_plane) {
        auto it = result.data_plane->errors_by_code.find(code);
        if (it != result.data_plane->errors_by_code.end()) seen = it->second;
      }
      ok &= seen <= allowed;
      detail += (detail.empty() ? "" : ", ") + code + " " + std::to_string(seen) + (seen <= allowed ? " <= " : " > ") +
                std::to_string(allowed);
    }
    Add(result, "max_errors", ok, detail);
  }
  if (expect.min_misrouted_reads > 0 && observed.store) {
    Add(result, "min_misrouted_reads", c.misrouted_reads_reported >= expect.min_misrouted_reads,
        "misrouted reads reported: " + std::to_string(c.misrouted_reads_reported) +
            (c.misrouted_reads_reported >= expect.min_misrouted_reads ? " >= " : " < ") +
            std::to_string(expect.min_misrouted_reads) + ", checksum mismatches: " +
            std::to_string(c.corrupt_reads_detected) + ", returned as good: " + std::to_string(c.corrupt_reads_returned));
  }
  if (expect.min_ops > 0) {
    Add(result, "min_ops", c.ops() >= expect.min_ops,
        "operations: " + std::to_string(c.ops()) + (c.ops() >= expect.min_ops ? " >= " : " < ") +
            std::to_string(expect.min_ops));
  }
}

}  // namespace kvchaos::harness
