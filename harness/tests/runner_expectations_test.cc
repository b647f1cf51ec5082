// Expectation verdicts on hand-made results: each expectation passes when met, fails with a
// detail saying what was measured, and unobserved ones give no verdict.
#include <gtest/gtest.h>

#include "harness/runner_expectations.h"

namespace kvchaos::harness {
namespace {

const InvariantVerdict* Find(const RunResult& r, const std::string& name) {
  for (const InvariantVerdict& v : r.verdicts) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

FailoverEvent Failover(double fault_at_ms, double serving_ms) {
  FailoverEvent f;
  f.fault_class = "crash";
  f.fault_at_ms = fault_at_ms;
  f.serving_ms = serving_ms;
  return f;
}

FailoverEvent Reelection(double fault_at_ms, double serving_ms, int node) {
  FailoverEvent f = Failover(fault_at_ms, serving_ms);
  f.old_leader = node;
  f.new_leader = node;
  return f;
}

TEST(RunnerExpectations, StaleWriteAcceptedFailsNoStaleWrites) {
  RunResult r;
  r.counters.stale_writes_accepted = 2;
  r.counters.stale_writes_rejected = 5;
  EvaluateExpectations(Expectations{}, Observed{}, r);
  const InvariantVerdict* v = Find(r, "no_stale_writes");
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->passed) << v->detail;
  EXPECT_NE(v->detail.find("stale writes accepted: 2"), std::string::npos) << v->detail;
  EXPECT_FALSE(r.passed());
}

TEST(RunnerExpectations, RejectedStaleWritesAndTokenRegressionsAreNotViolations) {
  RunResult r;
  r.counters.stale_writes_rejected = 40;
  r.counters.token_regressions = 1;  // Redis restarted empty; the fence kept rejecting old tokens
  EvaluateExpectations(Expectations{}, Observed{}, r);
  const InvariantVerdict* v = Find(r, "no_stale_writes");
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->passed) << v->detail;
  EXPECT_NE(v->detail.find("token regressions: 1"), std::string::npos) << v->detail;
}

TEST(RunnerExpectations, FailoverP99AgainstTheBound) {
  Expectations e;
  e.failover_p99_ms = 2500;
  RunResult ok;
  for (int i = 0; i < 10; ++i) ok.failovers.push_back(Failover(1000 * i, 1000 * i + 2000 + i));
  EvaluateExpectations(e, Observed{}, ok);
  ASSERT_NE(Find(ok, "failover_p99_ms"), nullptr);
  EXPECT_TRUE(Find(ok, "failover_p99_ms")->passed) << Find(ok, "failover_p99_ms")->detail;

  RunResult slow = ok;
  slow.verdicts.clear();
  slow.failovers.push_back(Failover(50000, 53000));  // 3000 ms: the p99 of 11 is the worst
  EvaluateExpectations(e, Observed{}, slow);
  const InvariantVerdict* v = Find(slow, "failover_p99_ms");
  EXPECT_FALSE(v->passed);
  EXPECT_EQ(v->detail, "p99 3000 ms > 2500 ms over 11 failover(s)");
}

// A bound that timed nothing fails (a 600 ms run "passed" with no failovers to time), unless the
// scenario allows no failover at all.
TEST(RunnerExpectations, ATimeBoundWithNoFailoverToTimeFailsUnlessNoneIsAllowed) {
  Expectations e;
  e.failover_p99_ms = 2500;
  e.failover_min_ms = 1500;
  RunResult none;
  EvaluateExpectations(e, Observed{}, none);
  EXPECT_FALSE(Find(none, "failover_p99_ms")->passed) << Find(none, "failover_p99_ms")->detail;
  EXPECT_FALSE(Find(none, "failover_min_ms")->passed) << Find(none, "failover_min_ms")->detail;
  e.failovers_min = 0;
  RunResult allowed;
  EvaluateExpectations(e, Observed{}, allowed);
  EXPECT_TRUE(Find(allowed, "failover_p99_ms")->passed) << Find(allowed, "failover_p99_ms")->detail;
  EXPECT_TRUE(Find(allowed, "failovers")->passed) << Find(allowed, "failovers")->detail;
}

TEST(RunnerExpectations, FailoverCountAndLowerBound) {
  Expectations e;
  e.failovers_min = 1;
  e.failovers_max = 2;
  e.failover_min_ms = 1800;
  RunResult r;
  r.failovers = {Failover(1000, 3000), Failover(9000, 10500), Failover(20000, 22000)};
  EvaluateExpectations(e, Observed{}, r);
  EXPECT_FALSE(Find(r, "failovers")->passed);
  EXPECT_EQ(Find(r, "failovers")->detail, "3 failover(s), expected 1..2");
  EXPECT_FALSE(Find(r, "failover_min_ms")->passed) << "a 1500 ms failover beat the lease";
  EXPECT_EQ(Find(r, "failover_min_ms")->detail, "fastest 1500 ms < 1800 ms over 3 failover(s)");
  r.failovers.erase(r.failovers.begin() + 1);
  r.verdicts.clear();
  EvaluateExpectations(e, Observed{}, r);
  EXPECT_TRUE(Find(r, "failovers")->passed) << Find(r, "failovers")->detail;
  EXPECT_TRUE(Find(r, "failover_min_ms")->passed) << Find(r, "failover_min_ms")->detail;
}

TEST(RunnerExpectations, ErrorBudgetsPerStatusCode) {
  Expectations e;
  e.max_errors = {{"StoreUnhealthy", 0}, {"Timeout", 5}};
  RunResult r;
  r.data_plane = DataPlane{{{"Timeout", 3}, {"StoreUnhealthy", 1}}, 0, 0};
  Observed observed;
  observed.store = true;
  EvaluateExpectations(e, observed, r);
  ASSERT_NE(Find(r, "max_errors"), nullptr);
  EXPECT_FALSE(Find(r, "max_errors")->passed);
  EXPECT_EQ(Find(r, "max_errors")->detail, "StoreUnhealthy 1 > 0, Timeout 3 <= 5");
  r.data_plane->errors_by_code.erase("StoreUnhealthy");
  r.verdicts.clear();
  EvaluateExpectations(e, observed, r);
  EXPECT_TRUE(Find(r, "max_errors")->passed) << Find(r, "max_errors")->detail;
}

TEST(RunnerExpectations, PercentileIsNearestRank) {
  std::vector<FailoverEvent> f;
  for (int i = 1; i <= 100; ++i) f.push_back(Failover(0, i));
  EXPECT_EQ(FailoverPercentileMs(f, 50), 50);
  EXPECT_EQ(FailoverPercentileMs(f, 99), 99);
  EXPECT_EQ(FailoverPercentileMs(f, 100), 100);
  EXPECT_EQ(FailoverPercentileMs({}, 99), 0);
}

TEST(RunnerExpectations, MinOpsUnnecessaryFailoverAndDualActing) {
  Expectations e;
  e.min_ops = 100;
  e.no_unnecessary_failover = true;
  RunResult r;
  r.counters.saves = 60;
  r.counters.loads = 30;
  r.counters.failovers = 3;
  r.counters.unnecessary_failovers = 1;
  r.counters.dual_acting_windows = 1;
  r.counters.dual_acting_ms = 12.5;
  EvaluateExpectations(e, Observed{}, r);
  EXPECT_EQ(Find(r, "min_ops")->detail, "operations: 90 < 100");
  EXPECT_FALSE(Find(r, "min_ops")->passed);
  EXPECT_FALSE(Find(r, "no_unnecessary_failover")->passed);
  EXPECT_FALSE(Find(r, "no_dual_acting")->passed);
  EXPECT_EQ(Find(r, "no_dual_acting")->detail, "dual-acting windows: 1 (12.5 ms)");
}

TEST(RunnerExpectations, UnobservedExpectationsGetNoVerdict) {
  Expectations e;
  e.leader_within_ms = 3000;
  RunResult r;
  EvaluateExpectations(e, Observed{}, r);  // no store, liveness not checked
  EXPECT_EQ(Find(r, "no_corrupt_reads"), nullptr);
  EXPECT_EQ(Find(r, "acked_blocks_readable"), nullptr);
  EXPECT_EQ(Find(r, "leader_within_ms"), nullptr);

  Observed liveness;
  liveness.liveness_checked = true;
  liveness.liveness_problem = "liveness: no leader served within 3000 ms";
  RunResult r2;
  EvaluateExpectations(e, liveness, r2);
  ASSERT_NE(Find(r2, "leader_within_ms"), nullptr);
  EXPECT_FALSE(Find(r2, "leader_within_ms")->passed);
}

}  // namespace
}  // namespace kvchaos::harness

namespace kvchaos::harness {
namespace {

// A node that lost its lease and took the lock back is a failover, but no handover: users bound
// the two apart (a short outage may cost a re-election, never a move to another node).
TEST(RunnerExpectations, ReelectionsAreCountedApartFromHandovers) {
  FailoverEvent handover = Failover(1000, 3000);
  handover.old_leader = 0;
  handover.new_leader = 1;
  RunResult r;
  r.failovers = {handover, Reelection(9000, 10500, 1), Reelection(20000, 22000, 1)};
  EXPECT_EQ(CountReelections(r.failovers), 2);
  Expectations e;
  e.failovers_max = 3;
  e.reelections_max = 1;
  EvaluateExpectations(e, Observed{}, r);
  EXPECT_EQ(Find(r, "failovers")->detail, "3 failover(s) (2 re-election(s)), expected 0..3");
  EXPECT_TRUE(Find(r, "failovers")->passed);
  ASSERT_NE(Find(r, "reelections"), nullptr) << "a reelections bound must be judged";
  EXPECT_FALSE(Find(r, "reelections")->passed) << "two re-elections passed a bound of one";
  EXPECT_EQ(Find(r, "reelections")->detail, "2 re-election(s) of 3 failover(s), expected 0..1");
  e.reelections_min = 2;
  e.reelections_max.reset();
  r.verdicts.clear();
  EvaluateExpectations(e, Observed{}, r);
  EXPECT_TRUE(Find(r, "reelections")->passed) << Find(r, "reelections")->detail;
  Expectations none;
  RunResult unbounded = r;
  unbounded.verdicts.clear();
  EvaluateExpectations(none, Observed{}, unbounded);
  EXPECT_EQ(Find(unbounded, "reelections"), nullptr) << "no verdict without a bound";
}

}  // namespace
}  // namespace kvchaos::harness
