// Expansion of a scenario's fault timeline into ordered steps (see timeline.h).
#include "harness/timeline.h"

#include <algorithm>
#include <string>

#include "core/common/units.h"

namespace kvchaos::harness {

Result<std::vector<TimelineStep>> ExpandTimeline(const Scenario& scenario) {
  std::vector<TimelineStep> steps;
  for (size_t i = 0; i < scenario.faults.size(); ++i) {
    const FaultEvent& f = scenario.faults[i];
    const Duration limit = f.until.value_or(scenario.duration);
    int occurrence = 0;
    for (Duration start = f.at;; start += *f.every) {
      steps.push_back({start, i, occurrence, false});
      if (f.length) steps.push_back({start + *f.length, i, occurrence, true});
      if (steps.size() > kMaxTimelineSteps) {
        return Status::InvalidConfig(scenario.file + ":" + std::to_string(f.line) + ": faults[" + std::to_string(i) +
                                     "]: expands to more than " + std::to_string(kMaxTimelineSteps) +
                                     " timeline steps (every " + FormatDuration(*f.every) + ")");
      }
      ++occurrence;
      // A zero period would never advance; the checks reject it, this keeps the loop bounded anyway.
      if (!f.every || f.every->count() <= 0 || start + *f.every >= limit) break;
    }
  }
  std::stable_sort(steps.begin(), steps.end(), [](const TimelineStep& a, const TimelineStep& b) {
    if (a.at != b.at) return a.at < b.at;
    if (a.ends != b.ends) return a.ends;
    if (a.fault_index != b.fault_index) return a.fault_index < b.fault_index;
    return a.occurrence < b.occurrence;
  });
  return steps;
}

}  // namespace kvchaos::harness
