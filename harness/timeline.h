// The fault timeline of a scenario flattened into the steps a runner applies, in the order it
// applies them: every `every` repeated up to `until` (or the end of the run), and every `for`
// turned into a start step and an end step (restart, resume, heal, clear the rule…).
//
// Order: by time; at equal times end steps come before start steps (so `crash for: 10s` at 0 and
// another crash of the same node at 10s are legal), then by position in the file, then occurrence.
// The sim and real runners and the checks all use this one order, so they agree on what happens.
#pragma once

#include <cstddef>
#include <vector>

#include "core/common/status.h"
#include "harness/scenario.h"

namespace kvchaos::harness {

struct TimelineStep {
  Duration at{};
  size_t fault_index = 0;  // into Scenario::faults
  int occurrence = 0;      // 0 for the first start of a repeated fault
  bool ends = false;       // true: the end of the fault's `for` window
};

// Bound on steps one scenario may expand to: `every: 1ms` over an hour is a mistake, not a plan.
inline constexpr size_t kMaxTimelineSteps = 200000;

// Fails (InvalidConfig naming the fault's line) when the expansion would exceed kMaxTimelineSteps.
Result<std::vector<TimelineStep>> ExpandTimeline(const Scenario& scenario);

}  // namespace kvchaos::harness
