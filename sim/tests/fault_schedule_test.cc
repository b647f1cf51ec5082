// Fault schedules: the --faults list parser names bad items, generated faults stay inside the
// chaos phase and end by its close, and a seed gives the same schedule.
#include "sim/fault_schedule.h"

#include <gtest/gtest.h>

namespace kvchaos::sim {
namespace {

TEST(FaultScheduleTest, ParsesListsAndNamesBadItems) {
  EXPECT_EQ(*ParseFaultList("crash,pause"), FaultBit(FaultKind::kCrash) | FaultBit(FaultKind::kPause));
  EXPECT_EQ(*ParseFaultList("none"), 0u);
  EXPECT_EQ(*ParseFaultList("default"), DefaultFaults());
  EXPECT_EQ(FaultListString(*ParseFaultList("partition,clock")), "partition,clock");
  Result<FaultMask> bad = ParseFaultList("crash,explode");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'explode'"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(DefaultFaults() & FaultBit(FaultKind::kBackendWipe)) << "wiping the backend is opt-in";
}

TEST(FaultScheduleTest, FaultsStayInsideTheChaosPhase) {
  FaultPlanOptions o;
  o.kinds = (FaultMask{1} << kFaultKindCount) - 1;
  o.nodes = 5;
  o.chaos_start_ns = 10'000'000'000;
  o.chaos_end_ns = 400'000'000'000;
  o.lease_ns = 10'000'000'000;
  const auto faults = GenerateFaults(Rng(42), o);
  ASSERT_GT(faults.size(), 20u);
  for (const FaultAction& f : faults) {
    EXPECT_GE(f.t, o.chaos_start_ns);
    EXPECT_LT(f.t, o.chaos_end_ns);
    EXPECT_LE(f.t + f.duration_ns, o.chaos_end_ns) << FaultKindName(f.kind) << " outlasts the chaos phase";
    EXPECT_LT(f.node, 5);
  }
  EXPECT_TRUE(std::is_sorted(faults.begin(), faults.end(), [](const auto& a, const auto& b) { return a.t < b.t; }));
  const auto again = GenerateFaults(Rng(42), o);
  ASSERT_EQ(again.size(), faults.size());
  for (size_t i = 0; i < faults.size(); ++i) EXPECT_EQ(again[i].t, faults[i].t);
  o.kinds = 0;
  EXPECT_TRUE(GenerateFaults(Rng(42), o).empty());
}

}  // namespace
}  // namespace kvchaos::sim
