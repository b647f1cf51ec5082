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

}  // namespace

double FailoverPercentileMs(const std::vector<FailoverEvent>& failovers, double p) {
  std::vector<double> ms;
  for (const FailoverEvent& f : failovers) ms.push_back(f.failover_ms());
  if (ms.empty()) return 0;
  std::sort(ms.begin(), ms.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(ms.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return ms[std::min(index, ms.size() - 1)];
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
  if (expect.no_unnecessary_failover) {
    Add(result, "no_unnecessary_failover", c.unnecessary_failovers == 0,
        "unnecessary failovers: " + std::to_string(c.unnecessary_failovers) + " of " + std::to_string(c.failovers));
  }
  const int64_t failovers = static_cast<int64_t>(result.failovers.size());
  const int64_t reelections = CountReelections(result.failovers);
  if (expect.failovers_min || expect.failovers_max) {
    const std::string of_which = reelections > 0 ? " (" + std::to_string(reelections) + " re-election(s))" : "";
    Add(result, "failovers", InRange(failovers, expect.failovers_min, expect.failovers_max),
        std::to_string(failovers) + " failover(s)" + of_which + ", expected " +
            RangeText(expect.failovers_min, expect.failovers_max));
  }
  if (expect.reelections_min || expect.reelections_max) {
    Add(result, "reelections", InRange(reelections, expect.reelections_min, expect.reelections_max),
        std::to_string(reelections) + " re-election(s) of " + std::to_string(failovers) + " failover(s), expected " +
            RangeText(expect.reelections_min, expect.reelections_max));
  }
  // A time bound with nothing to time passes only where the scenario allows no failover at all.
  const bool none_allowed = expect.failovers_min == 0;
  if (expect.failover_min_ms) {
    const double bound = static_cast<double>(*expect.failover_min_ms);
    if (result.failovers.empty()) {
      Add(result, "failover_min_ms", none_allowed,
          "no failovers to time (bound " + FormatMs(bound) + (none_allowed ? "; failovers.min is 0)" : ")"));
    } else {
      double fastest = result.failovers.front().failover_ms();
      for (const FailoverEvent& f : result.failovers) fastest = std::min(fastest, f.failover_ms());
      const bool ok = fastest >= bound;
      Add(result, "failover_min_ms", ok,
          "fastest " + FormatMs(fastest) + (ok ? " >= " : " < ") + FormatMs(bound) + " over " +
              std::to_string(failovers) + " failover(s)");
    }
  }
  if (expect.failover_p99_ms) {
    const double bound = static_cast<double>(*expect.failover_p99_ms);
    if (result.failovers.empty()) {
      Add(result, "failover_p99_ms", none_allowed,
          "no failovers to time (bound " + FormatMs(bound) + (none_allowed ? "; failovers.min is 0)" : ")"));
    } else {
      const double p99 = FailoverPercentileMs(result.failovers, 99);
      const bool ok = p99 <= bound;
      Add(result, "failover_p99_ms", ok,
          "p99 " + FormatMs(p99) + (ok ? " <= " : " > ") + FormatMs(bound) + " over " +
              std::to_string(result.failovers.size()) + " failover(s)");
    }
  }
  if (expect.leader_within_ms && observed.liveness_checked) {
    Add(result, "leader_within_ms", observed.liveness_problem.empty(),
        observed.liveness_problem.empty()
            ? "a leader served within " + FormatMs(static_cast<double>(*expect.leader_within_ms)) + " once faults stopped"
            : observed.liveness_problem);
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
  if (expect.min_ops > 0) {
    Add(result, "min_ops", c.ops() >= expect.min_ops,
        "operations: " + std::to_string(c.ops()) + (c.ops() >= expect.min_ops ? " >= " : " < ") +
            std::to_string(expect.min_ops));
  }
}

}  // namespace kvchaos::harness
