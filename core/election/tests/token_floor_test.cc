// LeaderElector::RaiseTokenAbove, the fencing floor: a term whose grant is not above the newest
// token a fenced resource has seen (the backend lost its counter) adopts a raised token, and every
// accessor and callback of the term reports that one; a raise that races the end of the term is
// never adopted. Manual clock and scripted backend, as the other elector tests.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

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

TEST_F(ElectorTest, RaiseTokenAboveAdoptsTheRaisedTokenForTheWholeTerm) {
  CallbackLog log;
  log.HoldPromote(true);
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return log.InPromote(); })) << "never promoted";
  ASSERT_EQ(e->Snapshot().token, 1u);

  auto same = e->RaiseTokenAbove(1, 0);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(*same, 1u) << "a grant above the floor must be kept";
  EXPECT_EQ(backend_.Calls(Op::kRaiseTokenFloor), 0) << "no backend call is needed when the grant is above the floor";

  auto raised = e->RaiseTokenAbove(1, 5);  // the fenced resource has seen token 5
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ(*raised, 6u);
  EXPECT_EQ(e->Snapshot().token, 6u) << "the term must adopt the raised token";
  EXPECT_EQ(backend_.store().GetLockHolder(kLeaderLockKey, kNoDeadline)->token, 6u)
      << "the backend's holding must carry it";

  auto old = e->RaiseTokenAbove(1, 7);
  EXPECT_EQ(old.status().code(), StatusCode::kNotLeader) << "the term is now identified by its raised token";

  backend_.Fail(Op::kRaiseTokenFloor, Status::Unavailable("backend down on purpose"), 1);
  auto failed = e->RaiseTokenAbove(6, 7);
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable) << failed.status().ToString();
  EXPECT_NE(failed.status().message().find("above 7"), std::string::npos) << failed.status().message();
  EXPECT_EQ(e->Snapshot().token, 6u) << "a failed raise must leave the term as it was";
  auto retried = e->RaiseTokenAbove(6, 7);
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_EQ(*retried, 8u);

  log.HoldPromote(false);
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); })) << "the raise must not keep the term from leading";
  EXPECT_EQ(e->CurrentToken(), 8u);
  EXPECT_EQ(log.promotions[0], 1u) << "OnBecomeLeader got the grant; the term fences with the raised token";
  e->Stop();
  EXPECT_EQ(backend_.store().GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "")
      << "Stop must still release the lock";
}

TEST_F(ElectorTest, ACallbackThatRaisesItsTokenLeadsWithIt) {
  // What MetaNode does: the promotion callback raises the token, and the term leads with it.
  ASSERT_EQ(backend_.store().TryLock(kLeaderLockKey, "old", 1ms, kNoDeadline)->token, 1u);
  rt_.Advance(1ms);  // the old holder's lock expired; the fenced resource saw token 9 meanwhile
  LeaderElector* self = nullptr;
  std::atomic<FencingToken> fenced{0};
  LeaderElectorCallbacks callbacks{[&](FencingToken granted) {
                                     auto t = self->RaiseTokenAbove(granted, 9);
                                     fenced = t.ok() ? *t : 0;
                                   },
                                   [] {}};
  LeaderElector e(rt_, backend_, TestOptions("a"), callbacks);
  self = &e;
  ASSERT_TRUE(e.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e.IsLeader(); })) << "never became leader";
  EXPECT_EQ(fenced.load(), 10u);
  EXPECT_EQ(e.CurrentToken(), 10u) << "the leader must write with the raised token";
  EXPECT_EQ(e.Snapshot().token, 10u);
  e.Stop();
}

TEST_F(ElectorTest, ARaiseAnsweredAfterTheTermEndedIsNotAdopted) {
  CallbackLog log;
  log.HoldPromote(true);
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return log.InPromote(); }));
  backend_.ParkNext(Op::kRaiseTokenFloor, Phase::kAfterCall);
  Result<FencingToken> late = Status::Unavailable("not run");
  std::thread raiser([&] { late = e->RaiseTokenAbove(1, 3); });
  ASSERT_TRUE(backend_.WaitParked(Op::kRaiseTokenFloor));
  ASSERT_TRUE(e->Demote().ok());  // the term ends while the raise is in flight
  backend_.Release(Op::kRaiseTokenFloor);
  raiser.join();
  EXPECT_EQ(late.status().code(), StatusCode::kNotLeader) << late.status().ToString();
  EXPECT_EQ(e->Snapshot().token, 0u) << "an ended term has no token";
  log.HoldPromote(false);
  ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; }));
  EXPECT_EQ(log.Demotions(), 1);
}

TEST_F(ElectorTest, ALockLostDuringTheRaiseEndsTheTerm) {
  CallbackLog log;
  log.HoldPromote(true);
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return log.InPromote(); }));
  backend_.store().Wipe();  // the backend lost everything, our holding included
  ASSERT_TRUE(backend_.store().TryLock(kLeaderLockKey, "b", 10s, kNoDeadline).ok());
  auto lost = e->RaiseTokenAbove(1, 4);
  EXPECT_EQ(lost.status().code(), StatusCode::kLockLost) << lost.status().ToString();
  EXPECT_EQ(e->Snapshot().token, 0u) << "the term must end when the backend says the lock is not ours";
  log.HoldPromote(false);
  ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; }));
  EXPECT_FALSE(e->IsLeader());
  EXPECT_EQ(backend_.store().GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "b")
      << "the other holder's lock was touched";
}

}  // namespace
}  // namespace kvchaos::election
