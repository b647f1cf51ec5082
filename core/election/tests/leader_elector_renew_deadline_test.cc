// Renewals bounded by the local lease (issue 14): a renew call sent into a coordination outage
// must give up by the lease deadline whatever the backend's own timeout and retries, the next one
// must follow at once and closer to the deadline, so an outage that ends before lease_end − margin
// is ridden out; and a renewal answered after the local lease ended never revives the term.
#include <gtest/gtest.h>

#include <vector>

#include "core/election/tests/elector_fixture.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;
using testing::CallbackLog;
using testing::ElectorTest;
using testing::Op;
using testing::Phase;
using testing::WaitFor;

TEST(RenewCallBudgetTest, HalfOfTheLeaseLeftWithAFloorAndNeverMoreThanLeft) {
  EXPECT_EQ(RenewCallBudget(900ms), 450ms);
  EXPECT_EQ(RenewCallBudget(3ms), 1500us);
  EXPECT_EQ(RenewCallBudget(1500us), 1ms) << "below 2 ms a call still gets 1 ms";
  EXPECT_EQ(RenewCallBudget(400us), 400us) << "never more than is left";
  EXPECT_EQ(RenewCallBudget(0ms), 0ms);
  EXPECT_EQ(RenewCallBudget(-5ms), 0ms);
}

// Waits until the backend has seen `calls` RenewLock calls; returns the last one's deadline.
MonoTime WaitForRenewCall(testing::ScriptedBackend& backend, size_t calls) {
  EXPECT_TRUE(WaitFor([&] { return backend.Deadlines(Op::kRenewLock).size() >= calls; }))
      << "renew call " << calls << " never came";
  const std::vector<MonoTime> deadlines = backend.Deadlines(Op::kRenewLock);
  return deadlines.empty() ? MonoTime{} : deadlines.back();
}

// A silent backend (every renewal lost): each call's deadline is half the lease left, never past
// the lease deadline; the next call leaves as soon as one has timed out, not a loop later; the
// term ends at the deadline and not before.
TEST_F(ElectorTest, RenewCallsInAnOutageEndByTheLeaseDeadlineAndCloseInOnIt) {
  CallbackLog log;
  auto e = Make(testing::TestOptions("a"), log);  // lease 1000 ms, loop 50 ms, margin 100 ms
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  const MonoTime lease_deadline = *e->Snapshot().lease_deadline;
  backend_.Silence(Op::kRenewLock, true);
  rt_.Advance(50ms);  // the next loop tick: its renewal goes into the outage
  int calls = 0;
  while (rt_.Now() < lease_deadline && calls < 40) {
    const MonoTime started = rt_.Now();
    const MonoTime deadline = WaitForRenewCall(backend_, static_cast<size_t>(++calls));
    ASSERT_LE(deadline, lease_deadline) << "renew call " << calls << " may outlive the local lease";
    ASSERT_EQ(deadline, started + RenewCallBudget(lease_deadline - started))
        << "renew call " << calls << " did not get half of the lease left";
    ASSERT_TRUE(e->IsLeader()) << "demoted " << ToMillis(lease_deadline - rt_.Now()) << " ms before the deadline";
    rt_.Advance(deadline - rt_.Now());  // the call times out at its deadline; the next leaves at once
  }
  EXPECT_GE(calls, 8) << "after a timed-out renewal the next must follow at once, closer to the deadline";
  EXPECT_LT(calls, 40) << "renew calls must be bounded";
  ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; })) << "the term outlived its lease";
  EXPECT_EQ(log.Demotions(), 1);
  backend_.Silence(Op::kRenewLock, false);
}

// The outage ends 25 ms before the deadline, while a renewal sent into it is still waiting for its
// lost answer: the call after it renews the lease, so the term goes on with the same token.
TEST_F(ElectorTest, AnOutageThatEndsBeforeTheLeaseDeadlineCausesNoDemotion) {
  CallbackLog log;
  auto e = Make(testing::TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  const MonoTime lease_deadline = *e->Snapshot().lease_deadline;
  backend_.Silence(Op::kRenewLock, true);
  rt_.Advance(50ms);
  size_t calls = 0;
  MonoTime deadline = WaitForRenewCall(backend_, ++calls);
  while (lease_deadline - rt_.Now() > 25ms) {
    rt_.Advance(deadline - rt_.Now());
    deadline = WaitForRenewCall(backend_, ++calls);
  }
  // The outage ends now; the call in flight was lost, the next one is answered.
  backend_.Silence(Op::kRenewLock, false);
  rt_.Advance(deadline - rt_.Now());
  const MonoTime renewed_at = rt_.Now();
  ASSERT_LT(renewed_at, lease_deadline);
  ASSERT_TRUE(WaitFor([&] { return *e->Snapshot().lease_deadline == renewed_at + 900ms; }))
      << "the renewal after the outage did not extend the lease from the time it was sent";
  rt_.Advance(lease_deadline - rt_.Now() + 10ms);
  EXPECT_TRUE(e->IsLeader()) << "an outage that ended before the lease deadline ended the term";
  EXPECT_EQ(e->CurrentToken(), 1u) << "the term changed";
  EXPECT_EQ(log.Demotions(), 0);
  EXPECT_EQ(log.Promotions(), 1u);
}

// The renewal reached the backend (the lock is renewed there) but its answer comes back after the
// local lease ended: the term stays over; the node wins a new term with a new token later.
TEST_F(ElectorTest, ARenewalAnsweredAfterTheLocalLeaseEndedDoesNotReviveTheTerm) {
  CallbackLog log;
  auto e = Make(testing::TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  const MonoTime lease_deadline = *e->Snapshot().lease_deadline;
  backend_.ParkNext(Op::kRenewLock, Phase::kAfterCall);
  rt_.Advance(50ms);
  ASSERT_TRUE(backend_.WaitParked(Op::kRenewLock));
  rt_.Advance(lease_deadline - rt_.Now());
  EXPECT_FALSE(e->IsLeader()) << "still leading at the lease deadline";
  ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; }));
  EXPECT_EQ(backend_.store().GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "a")
      << "the renewal did reach the backend";
  backend_.Release(Op::kRenewLock);  // the late success arrives
  ASSERT_TRUE(WaitFor([&] { return backend_.Completed(Op::kRenewLock) == 1; }));
  // A revived term would be promoted again with its old token; only a new campaign (re-entry on
  // the lock the backend still holds for us) may lead, with a new token.
  rt_.Advance(50ms);
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  EXPECT_EQ(e->CurrentToken(), 2u) << "a renewal answered after the local lease revived the old term";
  EXPECT_EQ(log.Promotions(), 2u);
  EXPECT_EQ(log.Demotions(), 1);
}

// Campaign calls get the usable lease as their deadline: a grant answered later could not start
// a term anyway.
TEST_F(ElectorTest, CampaignCallsAreBoundedByTheUsableLease) {
  CallbackLog log;
  backend_.ParkNext(Op::kTryLock, Phase::kBeforeCall);
  auto e = Make(testing::TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(backend_.WaitParked(Op::kTryLock));
  const MonoTime sent = rt_.Now();
  backend_.Release(Op::kTryLock);
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  ASSERT_EQ(backend_.Deadlines(Op::kGetLockHolder).size(), 1u);
  EXPECT_EQ(backend_.Deadlines(Op::kGetLockHolder)[0], sent + 900ms);
  ASSERT_EQ(backend_.Deadlines(Op::kTryLock).size(), 1u);
  EXPECT_EQ(backend_.Deadlines(Op::kTryLock)[0], sent + 900ms);
}

}  // namespace
}  // namespace kvchaos::election
