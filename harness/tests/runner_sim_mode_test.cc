// Sim mode and the run loop: scenarios run in the simulator and are judged against their
// expectations — a healthy scenario passes, an impossible bound fails with a repro command, the
// same seed gives the same trace hash, the thread count does not change results, and what the
// simulator cannot model is a clear error naming the fault's line.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "harness/real_mode.h"
#include "harness/runner.h"
#include "harness/sim_mode.h"
#include "harness/tests/scenario_test_util.h"

namespace kvchaos::harness {
namespace {

using testing::SimBase;

Scenario Parse(const std::string& text, const std::string& file = "t.yaml") {
  Result<Scenario> s = ParseScenario(text, file);
  if (!s.ok()) ADD_FAILURE() << s.status().message();
  return s.ok() ? *s : Scenario{};
}

const InvariantVerdict* Find(const RunResult& r, const std::string& name) {
  for (const InvariantVerdict& v : r.verdicts) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

std::string Describe(const RunResult& r) {
  std::string out = "error: '" + r.error + "'";
  for (const InvariantVerdict& v : r.verdicts) out += "\n  " + v.name + (v.passed ? " ok: " : " FAILED: ") + v.detail;
  for (const LeadershipSpan& l : r.leadership) {
    if (l.acting) out += "\n  node " + std::to_string(l.node) + " acted " + std::to_string(l.start_ms) + ".." + std::to_string(l.end_ms) + " ms";
  }
  for (const AppliedFault& f : r.faults) out += "\n  fault " + f.fault_class + " on " + f.target + " at " + std::to_string(f.start_ms) + " ms";
  return out;
}

// The leader crashes every 30 s for 5 s over two minutes.
std::string LeaderCrash(const std::string& bound_ms) {
  return SimBase() +
         "faults:\n"
         "  - {at: 10s, every: 30s, for: 5s, action: crash, node: leader, class: leader-crash}\n"
         "expect:\n"
         "  failover_p99_ms: " + bound_ms + "\n"
         "  no_unnecessary_failover: true\n"
         "  min_ops: 500\n";
}

class RunnerSimMode : public ::testing::Test {
 protected:
  void SetUp() override { spdlog::set_level(spdlog::level::off); }
};

TEST_F(RunnerSimMode, LeaderCrashMeetsItsBound) {
  const RunResult r = RunSimScenario(Parse(LeaderCrash("2500")), 7);
  EXPECT_TRUE(r.passed()) << Describe(r);
  EXPECT_EQ(r.mode, "sim");
  EXPECT_EQ(r.seed, 7u);
  EXPECT_EQ(r.trace_hash.size(), 16u);
  // Crashes at 10, 40, 70, 100 s; the quiet phase (last 8 s) is after all of them.
  ASSERT_EQ(r.faults.size(), 4u);
  EXPECT_EQ(r.faults[0].fault_class, "leader-crash");
  EXPECT_EQ(r.faults[0].start_ms, 10000);
  EXPECT_EQ(r.faults[0].end_ms, 15000);
  ASSERT_GE(r.failovers.size(), 4u) << "every leader crash must cause a failover";
  for (const FailoverEvent& f : r.failovers) {
    EXPECT_EQ(f.fault_class, "leader-crash");
    EXPECT_GT(f.failover_ms(), 1000) << "the lock expires on the backend first (lease 2000 ms)";
    EXPECT_LE(f.failover_ms(), 2500);
    EXPECT_NE(f.old_leader, f.new_leader);
  }
  EXPECT_GT(r.counters.saves, 500);
  EXPECT_EQ(r.counters.stale_writes_accepted, 0);
  EXPECT_FALSE(r.leadership.empty()) << "the result carries a leadership timeline";
  ASSERT_NE(Find(r, "failover_p99_ms"), nullptr);
  ASSERT_NE(Find(r, "leader_within_ms"), nullptr) << "the simulator's liveness check is reported";
}

// coordination: redis-sentinel in mode sim: replication cut for 6 s (longer than the lease),
// then the primary dies; the promoted replica lost the lock. Failovers are named after the fault
// and timed from the primary's death; some seeds give the lock a second holder (counted, the run
// still passes: dual acting is allowed by the file); no seed lets a stale write in.
TEST_F(RunnerSimMode, SentinelFailoverWithALaggingReplicaIsCountedAndFenced) {
  std::string text = SimBase();
  text.replace(text.find("  lease_ms: 2000"), 16, "  coordination: redis-sentinel\n  lease_ms: 4000");
  text += "faults:\n"
          "  - {at: 10s, for: 6s, action: coordination-failover, class: lock-lost}\n"
          "expect:\n"
          "  no_stale_writes: true\n"
          "  no_dual_acting: false\n"
          "  leader_within_ms: 10000\n";
  const Scenario s = Parse(text);
  int64_t duplicates = 0, failovers = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const RunResult r = RunSimScenario(s, seed);
    EXPECT_TRUE(r.passed()) << "seed " << seed << ": " << Describe(r);
    EXPECT_EQ(r.counters.stale_writes_accepted, 0) << "seed " << seed;
    // (A leader whose renewal finds the lock gone may take it again at once: no failover then.)
    for (const FailoverEvent& f : r.failovers) {
      EXPECT_EQ(f.fault_class, "lock-lost") << "seed " << seed;
      EXPECT_EQ(f.fault_at_ms, 16000) << "timed from the primary's death (the end of the cut): seed " << seed;
    }
    failovers += static_cast<int64_t>(r.failovers.size());
    duplicates += r.counters.duplicate_lock_holders;
  }
  EXPECT_GT(failovers, 0) << "no primary's death moved leadership over 12 seeds";
  EXPECT_GT(duplicates, 0) << "over 12 seeds no promotion (2-4 s, inside the 4 s lease) gave the lock a second holder";
  const RunResult again = RunSimScenario(s, 5);
  EXPECT_EQ(again.trace_hash, RunSimScenario(s, 5).trace_hash) << "redis-sentinel runs are deterministic too";
}

// Each etcd member cut from its two peers in turn (one of them is raft's leader: the other two
// elect a new one): the kvchaos leader keeps its lease, so no failover happens and none is needed.
TEST_F(RunnerSimMode, AnEtcdMemberCutFromItsPeersLeavesLeadershipWhereItIs) {
  std::string text = SimBase();
  text.replace(text.find("duration: 2m"), 12, "duration: 40s");
  text.replace(text.find("  lease_ms"), 0, "  coordination: etcd\n");
  text += "faults:\n"
          "  - {at: 5s, for: 4s, action: partition, member: 0, from: peers, class: member-cut}\n"
          "  - {at: 12s, for: 4s, action: partition, member: 1, from: peers, class: member-cut}\n"
          "  - {at: 19s, for: 4s, action: partition, member: 2, from: peers, class: member-cut}\n"
          "expect:\n"
          "  no_stale_writes: true\n"
          "  no_unnecessary_failover: true\n";
  const Scenario s = Parse(text);
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const RunResult r = RunSimScenario(s, seed);
    EXPECT_TRUE(r.passed()) << "seed " << seed << ": " << Describe(r);
    EXPECT_TRUE(r.failovers.empty()) << "a member cut from its peers moved kvchaos leadership: seed " << seed << ": "
                                     << Describe(r);
    ASSERT_EQ(r.faults.size(), 3u) << Describe(r);
    EXPECT_EQ(r.faults[1].target, "coordination member 1") << Describe(r);
  }
}

TEST_F(RunnerSimMode, ImpossibleBoundFailsWithRepro) {
  // A leader cut off from Redis keeps the lock until it expires there: no follower can take over
  // within 100 ms (the loader only rejects such bounds for crashes and pauses, so this one runs).
  const std::string text = SimBase() +
                           "faults:\n"
                           "  - {at: 10s, for: 5s, action: partition, node: leader, from: coordination, class: cut-off}\n"
                           "expect:\n"
                           "  failover_p99_ms: 100\n";
  const RunResult r = RunSimScenario(Parse(text, "scenarios/x.yaml"), 3);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_FALSE(r.passed());
  const InvariantVerdict* v = Find(r, "failover_p99_ms");
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->passed) << v->detail;
  EXPECT_NE(v->detail.find("> 100 ms"), std::string::npos) << v->detail;
  EXPECT_EQ(r.ReproCommand(), "kvchaos run scenarios/x.yaml --seed 3");
}

// Jitter on the leader's link to coordination: renewals that arrive seconds late cost it the
// lease, so a follower takes over (with no jitter applied the leader keeps its term).
TEST_F(RunnerSimMode, NetworkJitterOnTheLeadersLinkDelaysItsRenewalsPastTheLease) {
  const std::string text = SimBase() +
                           "faults:\n"
                           "  - {at: 10s, for: 20s, action: network, node: leader, jitter: 6s}\n";
  const RunResult r = RunSimScenario(Parse(text), 5);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_GE(r.failovers.size(), 1u) << "renewals up to 6 s late on a 2 s lease must move leadership\n" << Describe(r);
}

// `from: nodes` slows the links of the leader's API callers, not its link to coordination: it
// keeps its lease however slow its clients are.
TEST_F(RunnerSimMode, ANetworkFaultOnTheClientsLinksLeavesTheLeaseAlone) {
  const std::string text = SimBase() +
                           "faults:\n"
                           "  - {at: 10s, for: 20s, action: network, node: leader, from: nodes, delay: 3s}\n";
  const RunResult r = RunSimScenario(Parse(text), 5);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.failovers.size(), 0u) << "a 3 s delay to the leader's clients moved leadership\n" << Describe(r);
  EXPECT_FALSE(r.faults.empty()) << "the fault was applied";
}

TEST_F(RunnerSimMode, SameSeedSameTraceHash) {
  const Scenario s = Parse(LeaderCrash("2500"));
  const RunResult a = RunSimScenario(s, 11);
  const RunResult b = RunSimScenario(s, 11);
  const RunResult c = RunSimScenario(s, 12);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.failovers, b.failovers);
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_NE(a.trace_hash, c.trace_hash) << "another seed should take another path";
}

TEST_F(RunnerSimMode, JobsDoNotChangeResults) {
  const Scenario s = Parse(LeaderCrash("2500"));
  std::vector<PlannedRun> runs;
  for (uint64_t seed = 1; seed <= 4; ++seed) runs.push_back({s, seed});
  RunnerOptions one;
  RunnerOptions three;
  three.jobs = 3;
  size_t finished = 0;
  std::mutex mu;
  three.on_finished = [&](const RunResult&) {
    std::lock_guard<std::mutex> lock(mu);
    ++finished;
  };
  const std::vector<RunResult> a = RunAll(runs, one);
  const std::vector<RunResult> b = RunAll(runs, three);
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(finished, 4u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(b[i].seed, i + 1) << "results come back in plan order";
    EXPECT_EQ(a[i].trace_hash, b[i].trace_hash) << "seed " << a[i].seed;
  }
}

TEST_F(RunnerSimMode, GracefulDemoteFailsOverWithinALease) {
  const std::string text = SimBase() +
                           "faults:\n"
                           "  - {at: 20s, action: demote, node: leader, class: graceful-demote}\n"
                           "  - {at: 50s, action: demote, node: leader, class: graceful-demote}\n"
                           "expect:\n"
                           "  failover_p99_ms: 1000\n";
  const RunResult r = RunSimScenario(Parse(text), 5);
  EXPECT_TRUE(r.passed()) << Describe(r);
  ASSERT_GE(r.failovers.size(), 2u) << "each demote hands leadership over";
  EXPECT_EQ(r.failovers[0].fault_class, "graceful-demote");
  EXPECT_FALSE(r.failovers[0].unnecessary) << "a demoted leader was asked to go";
}

TEST_F(RunnerSimMode, RollingStopAndRestartKeepsALeader) {
  const std::string text = SimBase() +
                           "faults:\n"
                           "  - {at: 10s, for: 10s, action: stop, node: 0, class: rolling-restart}\n"
                           "  - {at: 40s, for: 10s, action: stop, node: 1, class: rolling-restart}\n"
                           "  - {at: 70s, for: 10s, action: stop, node: 2, class: rolling-restart}\n"
                           "expect:\n"
                           "  leader_within_ms: 3000\n"
                           "  failover_p99_ms: 2500\n";
  const RunResult r = RunSimScenario(Parse(text), 2);
  EXPECT_TRUE(r.passed()) << Describe(r);
  EXPECT_EQ(r.faults.size(), 3u);
}

TEST_F(RunnerSimMode, AStoreFaultOnABackendTheTopologyLacksIsAnErrorNamingTheLine) {
  // The loader already rejects this; a Scenario built in code must still not run as if it held.
  Scenario s = Parse(SimBase() + "faults:\n  - {at: 10s, for: 1s, action: crash, node: 0}\n", "t.yaml");
  FaultEvent store;
  store.action = FaultAction::kStoreFault;
  store.fault_class = "store-fault";
  store.at = std::chrono::seconds(20);
  store.backend = "p1";
  store.line = 14;
  s.faults.push_back(store);
  const RunResult r = RunSimScenario(s, 1);
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.error.find("t.yaml:14"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("backend 'p1' is not one of topology.backends"), std::string::npos) << r.error;
}

TEST_F(RunnerSimMode, FilterByModeKeepsOnlyThatMode) {
  std::vector<PlannedRun> runs = {{Parse(LeaderCrash("2500")), 1},
                                  {Parse(testing::RealBase() + "faults: []\n", "r.yaml"), 1}};
  EXPECT_EQ(FilterByMode(runs, RunMode::kSim).size(), 1u);
  EXPECT_EQ(FilterByMode(runs, RunMode::kReal).size(), 1u);
  EXPECT_EQ(FilterByMode(runs, std::nullopt).size(), 2u);
}

}  // namespace
}  // namespace kvchaos::harness
