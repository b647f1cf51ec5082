// The fault timeline as a runner applies it: repeats expanded, `for` windows as start/end pairs,
// ends before starts at equal times, file order after that.
#include "harness/timeline.h"

#include <gtest/gtest.h>

#include "harness/tests/scenario_test_util.h"

namespace kvchaos::harness {
namespace {

using namespace std::chrono_literals;

std::vector<TimelineStep> StepsOf(const std::string& faults) {
  Result<Scenario> s = ParseScenario(testing::SimBase() + "faults:\n" + faults, "t.yaml");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return {};
  Result<std::vector<TimelineStep>> steps = ExpandTimeline(*s);
  EXPECT_TRUE(steps.ok()) << steps.status().ToString();
  return steps.ok() ? *steps : std::vector<TimelineStep>{};
}

std::string Render(const std::vector<TimelineStep>& steps) {
  std::string out;
  for (const TimelineStep& s : steps) {
    out += std::to_string(ToMillis(s.at)) + (s.ends ? "e" : "s") + std::to_string(s.fault_index) + "." +
           std::to_string(s.occurrence) + " ";
  }
  return out;
}

TEST(Timeline, RepeatsRunUntilTheEndOrUntilAndEachForWindowEnds) {
  EXPECT_EQ(Render(StepsOf("  - {at: 10s, every: 30s, for: 5s, action: pause, node: 0}\n")),
            "10000s0.0 15000e0.0 40000s0.1 45000e0.1 70000s0.2 75000e0.2 100000s0.3 105000e0.3 ");
  EXPECT_EQ(Render(StepsOf("  - {at: 10s, every: 30s, until: 41s, action: clock-jump, node: 0, by: +1s}\n")),
            "10000s0.0 40000s0.1 ");
}

TEST(Timeline, EndsComeBeforeStartsAtTheSameTimeThenFileOrder) {
  EXPECT_EQ(Render(StepsOf("  - {at: 20s, action: crash, node: 1, for: 10s}\n"
                           "  - {at: 10s, action: crash, node: 1, for: 10s}\n"
                           "  - {at: 20s, action: heal}\n")),
            "10000s1.0 20000e1.0 20000s0.0 20000s2.0 30000e0.0 ");
}

TEST(Timeline, NoFaultsNoSteps) {
  Result<Scenario> s = ParseScenario(testing::SimBase(), "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Result<std::vector<TimelineStep>> steps = ExpandTimeline(*s);
  ASSERT_TRUE(steps.ok());
  EXPECT_TRUE(steps->empty());
}

}  // namespace
}  // namespace kvchaos::harness
