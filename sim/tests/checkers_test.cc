// Checkers on hand-made records: overlaps of different nodes count as dual acting (a node's own
// consecutive terms do not), failovers get their cause and timings, and liveness fails when no
// leader serves within the bound after the quiet phase starts.
#include "sim/checkers.h"

#include <gtest/gtest.h>

namespace kvchaos::sim {
namespace {

constexpr int64_t kMs = 1'000'000;

Interval Term(int node, uint64_t token, int64_t start_ms, int64_t end_ms) {
  return Interval{node, token, start_ms * kMs, end_ms * kMs, -1, end_ms * kMs};
}

TEST(CheckersTest, OverlapsOfDifferentNodesOnly) {
  uint64_t windows = 0;
  int64_t ns = 0;
  CountOverlaps({Term(0, 1, 0, 100), Term(1, 2, 90, 200), Term(1, 3, 200, 300), Term(0, 4, 300, 400)}, &windows, &ns);
  EXPECT_EQ(windows, 1u);
  EXPECT_EQ(ns, 10 * kMs);
  CountOverlaps({Term(0, 1, 0, 100), Term(0, 2, 50, 200)}, &windows, &ns);
  EXPECT_EQ(windows, 0u) << "one node's terms are not dual acting";
}

TEST(CheckersTest, FailoverCauseTimingAndLiveness) {
  Records records;
  records.nodes = 2;
  records.end_ns = 100'000 * kMs;
  records.acting = {Term(0, 1, 100, 5'000), Term(1, 2, 15'200, 100'000)};
  records.grants = {GrantRecord{100 * kMs, "n1", 1}, GrantRecord{15'100 * kMs, "n2", 2}};
  records.faults = {FaultRecord{4'900 * kMs, 30'000 * kMs, FaultKind::kCrash, 0, 0}};
  CheckerOptions options{10'000 * kMs, 50'000 * kMs, 20'000 * kMs};
  SimResult result;
  RunCheckers(records, options, result);
  ASSERT_EQ(result.failovers.size(), 1u);
  const FailoverEvent& f = result.failovers[0];
  EXPECT_EQ(f.cause, "crash");
  EXPECT_EQ(f.fault_ns, 4'900 * kMs);
  EXPECT_EQ(f.lock_acquired_ns, 15'100 * kMs);
  EXPECT_EQ(f.serving_ns, 15'200 * kMs);
  EXPECT_FALSE(f.unnecessary);
  EXPECT_TRUE(result.violations.empty()) << result.violations.front().message;
  EXPECT_EQ(result.leader_after_quiet_ns, 0);

  records.acting.back().end = 40'000 * kMs;  // nobody serves after the quiet phase starts
  SimResult dead;
  RunCheckers(records, options, dead);
  ASSERT_FALSE(dead.violations.empty());
  EXPECT_EQ(dead.violations.front().kind, ViolationKind::kLiveness) << dead.violations.front().message;
}

// A term's last accepted write must come one loop before its lease ends in the backend.
TEST(CheckersTest, ATermActingIntoTheLastLoopOfItsLeaseIsAnOverrun) {
  Records records;
  records.end_ns = 100'000 * kMs;
  records.acting = {Term(0, 1, 0, 5'000), Term(1, 2, 7'000, 9'950), Term(2, 3, 12'000, 100'000)};
  records.lease_ends = {{LeaseEnd{"n1", 1}, 5'100 * kMs}, {LeaseEnd{"n2", 2}, 10'000 * kMs}};
  CheckerOptions options;
  options.lease_ns = 2'000 * kMs;
  options.loop_ns = 100 * kMs;
  SimResult result;
  RunCheckers(records, options, result);
  EXPECT_EQ(result.lease_terms_checked, 2u) << "node 2's term has no known lease end and is not checked";
  EXPECT_EQ(result.lease_overruns, 1u) << "node 1 wrote at 9.95 s, inside the last loop of a lease ending at 10 s";
  EXPECT_EQ(result.max_lease_overrun_ns, 50 * kMs);
}

TEST(CheckersTest, FailoverWithoutNodeFaultIsUnnecessary) {
  Records records;
  records.end_ns = 100'000 * kMs;
  records.acting = {Term(0, 1, 0, 5'000), Term(1, 2, 5'500, 100'000)};
  records.faults = {FaultRecord{3'000 * kMs, 4'000 * kMs, FaultKind::kBackendOutage, 0, 1},
                    FaultRecord{4'500 * kMs, 4'600 * kMs, FaultKind::kClock, 1, 4}};  // a backend slew
  SimResult result;
  RunCheckers(records, CheckerOptions{10'000 * kMs, 50'000 * kMs, 20'000 * kMs}, result);
  ASSERT_EQ(result.failovers.size(), 1u);
  EXPECT_TRUE(result.failovers[0].unnecessary) << "a backend outage does not make the leader unhealthy";
  EXPECT_EQ(result.failovers[0].cause, "backend-outage") << "the outage, not the later slew, explains it";
  EXPECT_EQ(result.unnecessary_failovers, 1u);
}

}  // namespace
}  // namespace kvchaos::sim
