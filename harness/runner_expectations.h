// Judging a finished run against its scenario's `expect` block: one InvariantVerdict per
// expectation the run's mode can measure, from the counters and failover events already in the
// RunResult. Kept apart from the modes so sim and real runs are judged by the same rules, and so
// the rules are unit-tested on hand-made results.
#pragma once

#include <string>
#include <vector>

#include "harness/run_result.h"
#include "harness/scenario.h"

namespace kvchaos::harness {

// What a mode could observe; an expectation about something unobserved gets no verdict rather
// than a verdict that cannot fail.
struct Observed {
  bool store = false;  // reads and acknowledged blocks of the data-plane store
  bool lease_ends = false;  // each term's lease end in the coordination backend (counters.lease_*)
  // Set when the mode checked "a leader serves within leader_within_ms" itself (the simulator's
  // liveness check): empty means it held, otherwise what went wrong.
  bool liveness_checked = false;
  std::string liveness_problem;
  // Also judge "a leader within leader_within_ms after each fault" from the result's faults and
  // acting spans: set where the scenario asked for the bound (the simulator checks its default
  // bound after the quiet phase only).
  bool leader_after_each_fault = false;
};

// Nearest-rank percentile of failover times (ms); 0 for none.
double FailoverPercentileMs(const std::vector<FailoverEvent>& failovers, double p);

// Appends the verdicts of `expect` to result.verdicts.
void EvaluateExpectations(const Expectations& expect, const Observed& observed, RunResult& result);

}  // namespace kvchaos::harness
