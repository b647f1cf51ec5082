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


// Bounds per fault class judge that class's failovers only: a long pause must not hide a slow crash
// failover, nor break the crash's bound.
TEST(RunnerExpectations, ClassBoundsJudgeTheirClassOnly) {
  FailoverEvent pause = Failover(20000, 26000);
  pause.fault_class = "pause";
  RunResult r;
  r.failovers = {Failover(1000, 3100), Failover(9000, 11200), pause};
  Expectations e;
  e.classes["crash"].failover_p99_ms = 2500;
  e.classes["pause"].failover_p99_ms = 7000;
  e.classes["pause"].failovers_max = 0;
  EvaluateExpectations(e, Observed{}, r);
  const InvariantVerdict* crash = Find(r, "classes.crash.failover_p99_ms");
  ASSERT_NE(crash, nullptr) << "a class bound must be judged";
  EXPECT_TRUE(crash->passed) << "the 6 s pause failover was counted against the crash bound: " << crash->detail;
  EXPECT_EQ(crash->detail, "p99 2200 ms <= 2500 ms over 2 failover(s) of class crash");
  EXPECT_TRUE(Find(r, "classes.pause.failover_p99_ms")->passed);
  EXPECT_FALSE(Find(r, "classes.pause.failovers")->passed) << "one pause failover passed {max: 0}";
  EXPECT_EQ(Find(r, "classes.pause.failovers")->detail, "1 failover(s) of class pause, expected 0..0");
  EXPECT_EQ(Find(r, "failover_p99_ms"), nullptr) << "class bounds must not make a run-wide verdict";

  RunResult slow;
  slow.failovers = {Failover(1000, 4000), pause};
  EvaluateExpectations(e, Observed{}, slow);
  EXPECT_FALSE(Find(slow, "classes.crash.failover_p99_ms")->passed) << "a 3 s crash failover passed 2500 ms";

  RunResult none;
  EvaluateExpectations(e, Observed{}, none);
  EXPECT_FALSE(Find(none, "classes.crash.failover_p99_ms")->passed) << "a class bound that timed nothing passed";
  EXPECT_EQ(Find(none, "classes.crash.failover_p99_ms")->detail, "no failovers of class crash to time (bound 2500 ms)");
}

// The data plane's gap is the old leader's last accepted write to the new leader's first, which is
// shorter than the failover time when the fault came before the old leader stopped.
TEST(RunnerExpectations, UnavailabilityIsFromTheOldLeadersLastWriteToTheNewLeadersFirst) {
  FailoverEvent outage = Failover(1000, 4500);  // the coordination went away at 1 s...
  outage.old_leader_stopped_ms = 2900;           // ...the old leader stopped at lease end - loop
  FailoverEvent crash = Failover(10000, 12100);  // a crash stops the leader as it hits
  crash.old_leader_stopped_ms = 10000;
  EXPECT_DOUBLE_EQ(outage.unavailable_ms(), 1600);
  RunResult r;
  r.failovers = {outage, crash};
  Expectations e;
  e.unavailable_p99_ms = 2500;
  e.unavailable_max_ms = 2000;
  EvaluateExpectations(e, Observed{}, r);
  ASSERT_NE(Find(r, "unavailable_p99_ms"), nullptr);
  EXPECT_TRUE(Find(r, "unavailable_p99_ms")->passed) << Find(r, "unavailable_p99_ms")->detail;
  EXPECT_EQ(Find(r, "unavailable_p99_ms")->detail, "unavailable p99 2100 ms <= 2500 ms over 2 failover(s)");
  EXPECT_FALSE(Find(r, "unavailable_max_ms")->passed) << "a 2.1 s gap passed a 2 s max";
  EXPECT_EQ(Find(r, "unavailable_max_ms")->detail, "unavailable max 2100 ms > 2000 ms over 2 failover(s)");
}

AppliedFault Applied(std::string fault_class, double start_ms, std::optional<double> end_ms) {
  return AppliedFault{std::move(fault_class), "leader (node 0)", start_ms, end_ms};
}

LeadershipSpan Acting(int node, double start_ms, double end_ms) { return LeadershipSpan{node, start_ms, end_ms, true}; }

// "A leader within X" holds after each fault, not only the last: a cluster that stayed leaderless
// after an early fault and recovered only at the end fails.
TEST(RunnerExpectations, ALeaderMustServeWithinTheBoundAfterEachFault) {
  RunResult r;
  r.duration_ms = 60000;
  r.faults = {Applied("pause", 10000, 14000), Applied("crash", 30000, std::nullopt)};
  r.leadership = {Acting(0, 0, 10000), Acting(1, 16500, 30000), Acting(2, 32500, 60000),
                  LeadershipSpan{0, 14000, 15000, false}};  // believing it leads is not serving
  Expectations e;
  e.leader_within_ms = 3000;
  Observed watched;
  watched.liveness_checked = true;  // the mode's own check after the last fault held
  watched.leader_after_each_fault = true;
  EvaluateExpectations(e, watched, r);
  ASSERT_NE(Find(r, "leader_within_ms"), nullptr);
  EXPECT_TRUE(Find(r, "leader_within_ms")->passed) << Find(r, "leader_within_ms")->detail;

  RunResult late = r;
  late.verdicts.clear();
  late.leadership[1].start_ms = 17500;  // 3.5 s after the pause ended
  EvaluateExpectations(e, watched, late);
  EXPECT_FALSE(Find(late, "leader_within_ms")->passed) << "a leader 3.5 s after the pause passed a 3 s bound";
  EXPECT_EQ(Find(late, "leader_within_ms")->detail,
            "no node accepted writes within 3000 ms after the pause fault (leader (node 0)) ended at 14000 ms");

  // The next fault starting within the bound keeps the cluster leaderless: one window, judged at its end.
  RunResult back_to_back = late;
  back_to_back.verdicts.clear();
  back_to_back.faults.insert(back_to_back.faults.begin() + 1, Applied("outage", 15000, 16000));
  EvaluateExpectations(e, watched, back_to_back);
  EXPECT_TRUE(Find(back_to_back, "leader_within_ms")->passed) << Find(back_to_back, "leader_within_ms")->detail;

  Observed end_only = watched;
  end_only.leader_after_each_fault = false;
  late.verdicts.clear();
  EvaluateExpectations(e, end_only, late);
  EXPECT_TRUE(Find(late, "leader_within_ms")->passed) << "without the per-fault check only the mode's check counts";
}


// A term that acts into the last loop of its lease has lost the elector's margin, even where no
// other node acted yet: its own verdict, judged only where the mode saw the leases.
TEST(RunnerExpectations, LeaderStopsByLeaseEndJudgesTheLeaseOverruns) {
  Expectations e;
  e.leader_stops_by_lease_end = true;
  Observed leases;
  leases.lease_ends = true;
  RunResult r;
  r.counters.lease_terms_checked = 12;
  r.counters.lease_overruns = 1;
  r.counters.lease_overrun_max_ms = 35.25;
  EvaluateExpectations(e, leases, r);
  ASSERT_NE(Find(r, "leader_stops_by_lease_end"), nullptr);
  EXPECT_FALSE(Find(r, "leader_stops_by_lease_end")->passed) << "an overrun passed";
  EXPECT_EQ(Find(r, "leader_stops_by_lease_end")->detail,
            "terms that accepted a write later than lease end - loop: 1 of 12, by up to 35.2 ms");
  RunResult none;
  EvaluateExpectations(e, leases, none);
  EXPECT_FALSE(Find(none, "leader_stops_by_lease_end")->passed) << "a check that checked no term passed";
  RunResult unobserved;
  EvaluateExpectations(e, Observed{}, unobserved);
  EXPECT_EQ(Find(unobserved, "leader_stops_by_lease_end"), nullptr) << "no verdict where the mode saw no lease";
}

// The history expectations: judged only where a history was checked; each fails on its own
// findings, and "unknown (budget)" is never a pass.
TEST(RunnerExpectations, HistoryExpectationsJudgeTheCheckedHistory) {
  RunResult none;
  EvaluateExpectations(Expectations{}, Observed{}, none);
  EXPECT_EQ(Find(none, "linearizable"), nullptr) << "no history checked: no verdict";

  RunResult good;
  good.history = HistoryResult{};
  good.history->operations = 900;
  good.history->keys = 120;
  good.history->verdict = "linearizable";
  EvaluateExpectations(Expectations{}, Observed{}, good);
  for (const char* name : {"linearizable", "no_lost_writes", "monotonic_reads", "read_your_writes"}) {
    const InvariantVerdict* v = Find(good, name);
    ASSERT_NE(v, nullptr) << name << " is on by default";
    EXPECT_TRUE(v->passed) << name << ": " << v->detail;
  }
  EXPECT_NE(Find(good, "linearizable")->detail.find("900 ops over 120 keys"), std::string::npos)
      << Find(good, "linearizable")->detail;

  RunResult budget = good;
  budget.verdicts.clear();
  budget.history->verdict = "unknown (budget)";
  budget.history->keys_unknown_budget = 1;
  budget.history->first_anomaly = "key 'k9.v0': unknown (budget): the search ran out of steps";
  EvaluateExpectations(Expectations{}, Observed{}, budget);
  ASSERT_NE(Find(budget, "linearizable"), nullptr);
  EXPECT_FALSE(Find(budget, "linearizable")->passed) << "past the budget is not a pass";
  EXPECT_NE(Find(budget, "linearizable")->detail.find("k9.v0"), std::string::npos) << Find(budget, "linearizable")->detail;

  RunResult lost = good;
  lost.verdicts.clear();
  lost.history->lost_writes = 2;
  lost.history->first_anomaly = "no_lost_writes: key 'k1.v0', client sim_verify: the write ... is gone";
  EvaluateExpectations(Expectations{}, Observed{}, lost);
  ASSERT_NE(Find(lost, "no_lost_writes"), nullptr);
  EXPECT_FALSE(Find(lost, "no_lost_writes")->passed);
  EXPECT_NE(Find(lost, "no_lost_writes")->detail.find("k1.v0"), std::string::npos) << Find(lost, "no_lost_writes")->detail;
  EXPECT_TRUE(Find(lost, "monotonic_reads")->passed);

  Expectations off;
  off.no_lost_writes = false;
  RunResult lost_allowed = lost;
  lost_allowed.verdicts.clear();
  EvaluateExpectations(off, Observed{}, lost_allowed);
  EXPECT_EQ(Find(lost_allowed, "no_lost_writes"), nullptr) << "turned off: no verdict";
}

}  // namespace
}  // namespace kvchaos::harness
