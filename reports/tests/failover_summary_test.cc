// Aggregation for the failover report: nearest-rank percentiles, per-class grouping with the
// strictest bound, safety totals, seeds and the failed runs, checked on known inputs.
#include "reports/failover_summary.h"

#include <gtest/gtest.h>

#include "harness/tests/result_fixtures.h"

namespace kvchaos::reports {
namespace {

using harness::FailoverEvent;
using harness::RunResult;

TEST(Percentile, IsNearestRank) {
  const std::vector<double> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(Percentile(ten, 50), 5);
  EXPECT_EQ(Percentile(ten, 90), 9);
  EXPECT_EQ(Percentile(ten, 99), 10);
  EXPECT_EQ(Percentile(ten, 100), 10);
  EXPECT_EQ(Percentile(ten, 1), 1);
  EXPECT_EQ(Percentile({42}, 99), 42);
  EXPECT_EQ(Percentile({}, 50), 0);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_EQ(Percentile(hundred, 99), 99) << "p99 of 1..100 is 99, not an interpolated 99.01";
}

RunResult WithFailovers(uint64_t seed, const std::string& cls, const std::vector<double>& times, int64_t bound) {
  RunResult r = harness::testing::PassingRun();
  r.seed = seed;
  r.failover_bound_ms = bound;
  r.failovers.clear();
  for (double t : times) r.failovers.push_back({cls, 1000, 0, 1, std::nullopt, std::nullopt, 1000 + t, false});
  return r;
}

TEST(Summarize, GroupsFailoversByClassWithTheStrictestBound) {
  std::vector<RunResult> runs{WithFailovers(1, "crash", {100, 300}, 250), WithFailovers(2, "crash", {200}, 400),
                              WithFailovers(3, "pause", {50}, 400)};
  runs[2].failovers[0].unnecessary = true;
  const FailoverSummary s = Summarize(runs);
  ASSERT_EQ(s.classes.size(), 2u);
  const ClassStats& crash = s.classes[0];
  EXPECT_EQ(crash.fault_class, "crash");
  EXPECT_EQ(crash.failover_ms, (std::vector<double>{100, 200, 300}));
  EXPECT_EQ(crash.p50, 200);
  EXPECT_EQ(crash.p99, 300);
  EXPECT_EQ(crash.max, 300);
  EXPECT_EQ(crash.mean, 200);
  EXPECT_EQ(crash.bound_ms, 250);
  EXPECT_EQ(crash.over_bound, 1u) << "300 ms broke its run's 250 ms bound; 200 ms was within its run's 400 ms";
  EXPECT_EQ(s.classes[1].unnecessary, 1u);
  EXPECT_EQ(s.unnecessary_failovers, 1);
  EXPECT_EQ(s.failovers, 4u);
  EXPECT_EQ(s.seeds, (std::vector<uint64_t>{1, 2, 3}));
}

// A class's own bound (expect.classes.<class>.failover_p99_ms) judges its failovers, not the run's
// looser one; classes without one keep the run's. The data plane's gap is summarised beside them.
TEST(Summarize, AClassBoundReplacesTheRunsBoundForThatClass) {
  RunResult run = WithFailovers(1, "crash", {2100, 2600}, 8000);
  run.class_failover_bounds_ms["crash"] = 2500;
  FailoverEvent pause{"pause", 1000, 0, 1, 2000.0, std::nullopt, 7000, false};
  run.failovers.push_back(pause);
  run.failovers[0].old_leader_stopped_ms = 1000;
  const FailoverSummary s = Summarize({run});
  ASSERT_EQ(s.classes.size(), 2u);
  EXPECT_EQ(s.classes[0].bound_ms, 2500) << "the crash class's own bound was ignored";
  EXPECT_EQ(s.classes[0].over_bound, 1u) << "2600 ms broke the crash class's 2500 ms bound";
  EXPECT_EQ(s.classes[1].bound_ms, 8000) << "a class without its own bound keeps the run's";
  EXPECT_EQ(s.classes[1].over_bound, 0u);
  EXPECT_EQ(s.classes[1].unavailable_max, 5000) << "the pause's gap runs from the old leader's stop at 2 s to 7 s";
  EXPECT_EQ(s.classes[0].unavailable_ms, (std::vector<double>{2100, 2600}));
  const nlohmann::json j = SummaryToJson(s);
  EXPECT_EQ(j["fault_classes"]["pause"]["unavailable_p99_ms"], 5000);
}

TEST(Summarize, TotalsSafetyCountersAndListsFailedRuns) {
  const std::vector<RunResult> runs{harness::testing::PassingRun(), harness::testing::FailingRun()};
  const FailoverSummary s = Summarize(runs);
  EXPECT_EQ(s.runs, 2u);
  EXPECT_EQ(s.failed_runs, 1u);
  ASSERT_EQ(s.failed.size(), 1u);
  EXPECT_EQ(s.failed[0]->scenario_name, "redis-outage-long");
  EXPECT_EQ(s.stale_writes_accepted, 2);
  EXPECT_EQ(s.stale_writes_rejected, 6);
  EXPECT_EQ(s.dual_acting_windows, 2);
  EXPECT_DOUBLE_EQ(s.dual_acting_ms, 1.0);
  ASSERT_EQ(s.scenarios.size(), 2u);
  EXPECT_EQ(s.scenarios[0].name, "leader-crash");
  EXPECT_EQ(s.scenarios[1].failed, 1u);
  const nlohmann::json j = SummaryToJson(s);
  EXPECT_EQ(j["format"], "kvchaos-failover-summary/1");
  EXPECT_EQ(j["runs"], 2);
  EXPECT_EQ(j["seeds"], nlohmann::json::array({7, 42}));
  EXPECT_EQ(j["fault_classes"]["crash"]["p99_ms"], 2101.5);
  EXPECT_EQ(j["fault_classes"]["crash"]["bound_ms"], 2500);
  EXPECT_EQ(j["fault_classes"]["crash"]["p99_within_bound"], true);
  EXPECT_EQ(j["failed"][0]["repro"], "kvchaos run 'scenarios/ci/redis outage long.yaml' --seed 7");
}

// The same timeline run against different coordination kinds reads side by side: one row per
// (coordination, mode) with its own failover times and safety figures; older results that did not
// record a kind are grouped apart, never merged into a kind they may not have used.
TEST(Summarize, GroupsFailoversAndSafetyPerCoordinationKindAndMode) {
  std::vector<RunResult> runs{WithFailovers(1, "crash", {3000, 3100}, 4000), WithFailovers(2, "crash", {3200}, 4000),
                              WithFailovers(1, "crash", {2900}, 4000), WithFailovers(1, "crash", {50}, 4000),
                              WithFailovers(9, "crash", {}, 4000)};
  runs[0].coordination = runs[1].coordination = "etcd";
  runs[0].mode = runs[1].mode = "real";
  runs[2].coordination = "redis-sentinel";
  runs[2].mode = "real";
  runs[2].counters.token_regressions = 2;
  runs[2].counters.dual_acting_windows = 1;
  runs[2].counters.dual_acting_ms = 12.5;
  runs[3].coordination = "redis-sentinel";
  runs[3].mode = "sim";
  runs[4].coordination.clear();
  const FailoverSummary s = Summarize(runs);
  ASSERT_EQ(s.coordination.size(), 4u) << "etcd/real, not recorded, redis-sentinel/real, redis-sentinel/sim";
  const CoordinationStats& etcd = s.coordination[0];
  EXPECT_EQ(etcd.coordination, "etcd");
  EXPECT_EQ(etcd.runs, 2u);
  EXPECT_EQ(etcd.failover_ms, (std::vector<double>{3000, 3100, 3200}));
  EXPECT_EQ(etcd.p50, 3100);
  EXPECT_EQ(etcd.p99, 3200);
  EXPECT_EQ(etcd.token_regressions, 0);
  EXPECT_EQ(s.coordination[1].coordination, "not recorded");
  EXPECT_TRUE(s.coordination[1].failover_ms.empty());
  const CoordinationStats& sentinel_real = s.coordination[2];
  EXPECT_EQ(sentinel_real.mode, "real");
  EXPECT_EQ(sentinel_real.token_regressions, 2) << "duplicate lock holders of the real sentinel runs";
  EXPECT_EQ(sentinel_real.dual_acting_windows, 1);
  EXPECT_EQ(s.coordination[3].mode, "sim") << "a sim run of a kind is not pooled with its real runs";
  EXPECT_EQ(s.coordination[3].p99, 50);
  const nlohmann::json j = SummaryToJson(s)["coordination"];
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0]["coordination"], "etcd");
  EXPECT_EQ(j[0]["p99_ms"], 3200);
  EXPECT_TRUE(j[1]["p99_ms"].is_null()) << "no failover to time: null, not 0";
  EXPECT_EQ(j[2]["token_regressions"], 2);
  EXPECT_TRUE(j[2]["duplicate_lock_holders"].is_null()) << "real mode does not measure duplicate holders";
  EXPECT_EQ(j[3]["duplicate_lock_holders"], 0);
}

}  // namespace
}  // namespace kvchaos::reports
