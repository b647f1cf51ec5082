// The failover checks both modes share, on hand-made histories: the first fault that hit the old
// leader is the cause, "unnecessary" follows its one definition (a coordination outage shorter than
// lease - margin does not make a failover necessary, a longer one or a wipe does, a store fault
// never does), overlapping terms are dual acting and not a handover, and re-elections are flagged.
#include "sim/failover_checks.h"

#include <gtest/gtest.h>

namespace kvchaos::sim {
namespace {

constexpr int64_t kMs = 1'000'000;
const FailoverCheckOptions kLease2s{2000 * kMs, 120 * kMs};

TermSpan Term(int node, uint64_t token, int64_t start_ms, int64_t end_ms) {
  return TermSpan{node, token, start_ms * kMs, end_ms * kMs};
}

FaultSpan Fault(FaultScope scope, int node, int64_t start_ms, int64_t end_ms, const char* name, bool stops = false) {
  return FaultSpan{start_ms * kMs, end_ms * kMs, scope, node, name, stops};
}

// Node 0 leads until 10 s, node 1 from 12 s.
std::vector<TermSpan> Handover() { return {Term(0, 1, 0, 10'000), Term(1, 2, 12'000, 30'000)}; }

TEST(FailoverChecksTest, TheFirstFaultThatHitTheOldLeaderIsTheCause) {
  const std::vector<FaultSpan> faults = {
      Fault(FaultScope::kCoordinationOutage, -1, 9'000, 12'000, "outage"),
      Fault(FaultScope::kNodeProcess, 0, 8'500, 12'000, "pause", true),
  };
  const FailoverVerdict v = CheckFailovers(Handover(), {{11'900 * kMs, 1, 2}}, faults, kLease2s);
  ASSERT_EQ(v.failovers.size(), 1u);
  const Failover& f = v.failovers[0];
  EXPECT_EQ(f.fault, 1) << "the pause began first and hit the old leader itself";
  EXPECT_EQ(f.fault_ns, 8'500 * kMs);
  EXPECT_EQ(f.old_stopped_ns, 8'500 * kMs) << "a pause stops the old leader when it begins";
  EXPECT_EQ(f.lock_acquired_ns, 11'900 * kMs);
  EXPECT_FALSE(f.unnecessary);
}

TEST(FailoverChecksTest, ACoordinationOutageIsNecessaryOnlyWhenTheLeaseCannotOutliveIt) {
  // lease - margin = 1880 ms
  for (const auto& [length_ms, necessary] : std::vector<std::pair<int64_t, bool>>{{1000, false}, {1879, false}, {1880, true}, {5000, true}}) {
    const FailoverVerdict v = CheckFailovers(
        Handover(), {}, {Fault(FaultScope::kCoordinationOutage, -1, 8'500, 8'500 + length_ms, "outage")}, kLease2s);
    ASSERT_EQ(v.failovers.size(), 1u);
    EXPECT_EQ(v.failovers[0].unnecessary, !necessary) << "an outage of " << length_ms << " ms";
    EXPECT_EQ(v.failovers[0].fault, 0) << "the outage is still named as the cause";
  }
}

TEST(FailoverChecksTest, WipesAndClockStepsOfCoordinationAreNecessaryStoreFaultsAndDriftNever) {
  auto unnecessary = [](FaultScope scope) {
    const FailoverVerdict v = CheckFailovers(Handover(), {}, {Fault(scope, -1, 9'000, 9'500, "f")}, kLease2s);
    return v.failovers.at(0).unnecessary;
  };
  EXPECT_FALSE(unnecessary(FaultScope::kCoordinationState));
  EXPECT_FALSE(unnecessary(FaultScope::kCoordinationClock));
  EXPECT_TRUE(unnecessary(FaultScope::kCoordinationDrift));
  EXPECT_TRUE(unnecessary(FaultScope::kStore));
  EXPECT_TRUE(unnecessary(FaultScope::kNodePeers)) << "leadership goes through coordination, not the peers";
}

TEST(FailoverChecksTest, OneCoordinationMemberDownIsNamedButNeverMakesAFailoverNecessary) {
  // Longer than the lease: were it the whole backend, losing the lease would be its fault.
  const FailoverVerdict v =
      CheckFailovers(Handover(), {}, {Fault(FaultScope::kCoordinationMember, -1, 8'000, 13'000, "etcd-member")}, kLease2s);
  ASSERT_EQ(v.failovers.size(), 1u);
  EXPECT_EQ(v.failovers[0].fault, 0) << "the member's crash is named as the cause";
  EXPECT_TRUE(v.failovers[0].unnecessary) << "the other members kept a quorum: the leader could have renewed through them";
}

TEST(FailoverChecksTest, AFaultOutsideTheLeaseBeforeTheHandoverDoesNotExplainIt) {
  const FailoverVerdict v = CheckFailovers(
      Handover(), {}, {Fault(FaultScope::kNodeProcess, 0, 1'000, 2'000, "pause", true)}, kLease2s);
  ASSERT_EQ(v.failovers.size(), 1u);
  EXPECT_EQ(v.failovers[0].fault, -1);
  EXPECT_TRUE(v.failovers[0].unnecessary) << "the node was healthy for the whole lease before it stopped";
  EXPECT_EQ(v.unnecessary, 1u);
}

TEST(FailoverChecksTest, OverlappingTermsAreDualActingNotAHandoverAndReElectionsAreFlagged) {
  const FailoverVerdict dual = CheckFailovers({Term(0, 1, 0, 10'000), Term(1, 2, 9'000, 20'000)}, {}, {}, kLease2s);
  EXPECT_EQ(dual.dual_acting_windows, 1u);
  EXPECT_EQ(dual.dual_acting_ns, 1'000 * kMs);
  EXPECT_TRUE(dual.failovers.empty());

  const FailoverVerdict again = CheckFailovers({Term(0, 1, 0, 10'000), Term(0, 3, 11'000, 20'000)}, {}, {}, kLease2s);
  ASSERT_EQ(again.failovers.size(), 1u);
  EXPECT_TRUE(again.failovers[0].same_node) << "the same node with a new token is a re-election";
  EXPECT_EQ(again.dual_acting_windows, 0u);
}

}  // namespace
}  // namespace kvchaos::sim
