// The three upstream races of issue 5, each forced open with a parked backend call or a held
// callback: (1) a demote lost while PROMOTING or while a promotion is queued; (2) a renewal racing
// Demote that re-promotes after the lock was deleted; (3) an "already held by me" answer whose
// expiry is on the backend's clock.
#include <gtest/gtest.h>

#include "core/election/leader_elector.h"
#include "core/election/tests/elector_fixture.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;
using testing::CallbackLog;
using testing::ElectorTest;
using testing::Op;
using testing::Phase;
using testing::TestOptions;
using testing::WaitFor;

// Race 1a: Demote arrives while OnBecomeLeader is still running.
TEST_F(ElectorTest, Race1DemoteWhilePromotingIsNotLost) {
  CallbackLog log;
  log.HoldPromote(true);
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return log.InPromote(); }));
  EXPECT_EQ(e->state(), ElectorState::kPromoting);
  EXPECT_FALSE(e->IsLeader()) << "PROMOTING must not serve";
  ASSERT_TRUE(e->Demote(10s).ok());
  log.HoldPromote(false);
  ASSERT_TRUE(WaitFor([&] { return log.Demotions() == 1; })) << "the demote path never ran";
  ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; }))
      << "ended in " << ElectorStateName(e->state()) << ": the demote was lost";
  EXPECT_FALSE(e->IsLeader());
  EXPECT_EQ(backend_.store().GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "");
  rt_.Advance(100ms);
  WaitFor([] { return false; }, 20ms);
  EXPECT_EQ(e->state(), ElectorState::kFollower) << "re-promoted inside the forbid time";
  EXPECT_EQ(log.Promotions(), 1u);
}

// Race 1b: a new term is won while the transition thread is still demoting the previous one
// (its promotion is queued), and Demote arrives before that promotion ran.
TEST_F(ElectorTest, Race1DemoteWithAPromotionQueuedIsNotLost) {
  CallbackLog log;
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  log.HoldDemote(true);
  ASSERT_TRUE(e->Demote(0ms).ok());  // no cool-down: the lock thread campaigns again at once
  ASSERT_TRUE(WaitFor([&] { return log.InDemote(); }));
  rt_.Advance(50ms);
  ASSERT_TRUE(WaitFor([&] { return e->Snapshot().token == 2; })) << "second term was not won";
  EXPECT_EQ(e->state(), ElectorState::kDemoting);
  EXPECT_FALSE(e->IsLeader());
  ASSERT_TRUE(e->Demote(10s).ok()) << "Demote must accept a term whose promotion is still queued";
  log.HoldDemote(false);
  ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; }));
  rt_.Advance(100ms);
  WaitFor([] { return false; }, 20ms);
  EXPECT_EQ(e->state(), ElectorState::kFollower) << "the queued promotion ran after Demote";
  EXPECT_EQ(log.Promotions(), 1u) << "OnBecomeLeader ran for the demoted term";
  EXPECT_EQ(log.Demotions(), 1);
  EXPECT_EQ(backend_.store().GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "")
      << "lock of the second term not released";
}

// Race 2: a renewal succeeds on the backend, Demote deletes the lock, then the renewal's answer
// arrives. Upstream re-promoted on that answer; here the term stays over.
TEST_F(ElectorTest, Race2RenewAnswerAfterDemoteDoesNotRepromote) {
  CallbackLog log;
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  backend_.ParkNext(Op::kRenewLock, Phase::kAfterCall);
  rt_.Advance(50ms);
  ASSERT_TRUE(backend_.WaitParked(Op::kRenewLock));
  ASSERT_TRUE(e->Demote(1s).ok());
  EXPECT_EQ(backend_.store().GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "");
  backend_.Release(Op::kRenewLock);
  ASSERT_TRUE(WaitFor([&] { return backend_.Completed(Op::kRenewLock) == 1; }));
  ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; }));
  EXPECT_FALSE(e->IsLeader()) << "a stale renewal revived the demoted term";
  // Had the old term been revived, the lock thread would keep renewing (and fail) instead of
  // campaigning: after the forbid time it must win a *new* term with a new token.
  const int renewals = backend_.Calls(Op::kRenewLock);
  for (int i = 0; i < 19; ++i) {
    rt_.Advance(50ms);
    WaitFor([] { return false; }, 1ms);
  }
  EXPECT_FALSE(e->IsLeader());
  EXPECT_EQ(backend_.Calls(Op::kRenewLock), renewals) << "kept renewing a demoted term";
  rt_.Advance(100ms);
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  EXPECT_EQ(e->CurrentToken(), 2u);
  EXPECT_EQ(log.Promotions(), 2u);
  EXPECT_EQ(log.Demotions(), 1);
}

// Race 2b: a campaign's TryLock is on the wire when its term would be void (Demote bumped the
// epoch): the stale grant must be released, not turned into a term.
TEST_F(ElectorTest, Race2StaleCampaignGrantIsReleased) {
  CallbackLog log;
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  // End the term by lease expiry while keeping the backend lock ours, then let the next campaign's
  // TryLock hang before reaching the backend.
  backend_.Fail(Op::kRenewLock, Status::Unavailable("slow network"), -1);
  backend_.ParkNext(Op::kTryLock, Phase::kAfterCall);
  rt_.Advance(900ms);
  ASSERT_TRUE(WaitFor([&] { return log.Demotions() == 1; }));
  rt_.Advance(50ms);
  ASSERT_TRUE(backend_.WaitParked(Op::kTryLock)) << "no re-campaign";
  // The backend granted (token 2) but the answer is late; meanwhile the node is asked to stop.
  std::thread stopper([&] { e->Stop(); });
  WaitFor([] { return false; }, 200ms);  // Stop marks the elector stopping, then joins the lock thread
  backend_.Release(Op::kTryLock);
  stopper.join();
  EXPECT_EQ(log.Promotions(), 1u) << "a grant that arrived during Stop started a term";
  EXPECT_EQ(backend_.store().GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "") << "stale grant not released";
}

// Race 3: the backend says "held by you" with a remaining TTL on its own clock (here an hour).
// The elector must not take its deadline from that: it re-enters via TryLock and measures its own.
TEST_F(ElectorTest, Race3HeldByMeAnswerDoesNotSetTheDeadline) {
  // A previous incarnation of node "a" holds the lock.
  auto old = backend_.store().TryLock(kLeaderLockKey, "a", 1000ms, kNoDeadline);
  ASSERT_TRUE(old.ok());
  backend_.OverrideHolder(LockHolderInfo{"a", std::chrono::hours(1), old->token});
  CallbackLog log;
  auto e = Make(TestOptions("a"), log);
  const MonoTime before = rt_.Now();
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  EXPECT_EQ(backend_.Calls(Op::kTryLock), 1) << "must re-enter with TryLock, not adopt the old holding";
  EXPECT_EQ(*e->Snapshot().lease_deadline, before + 900ms) << "deadline must come from our clock";
  EXPECT_EQ(e->CurrentToken(), old->token + 1) << "re-entry must carry a new token";
  // With renewals failing, the term ends at our deadline although the backend claims an hour.
  backend_.Fail(Op::kRenewLock, Status::Unavailable("redis down"), -1);
  rt_.Advance(900ms);
  EXPECT_FALSE(e->IsLeader());
  ASSERT_TRUE(WaitFor([&] { return log.Demotions() == 1; }));
}

}  // namespace
}  // namespace kvchaos::election
