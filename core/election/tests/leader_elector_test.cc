// LeaderElector: promotion, the lease deadline rule, renewals, failover and the testing knobs,
// on a manual clock with a scripted backend (so no assertion depends on real-time speed).
#include "core/election/leader_elector.h"

#include <gtest/gtest.h>

#include "core/common/real_runtime.h"
#include "core/election/coordination_memory_backend.h"
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

TEST(LeaderElectorOptionsTest, DefaultMarginCoversDriftAndOneLoop) {
  EXPECT_EQ(DefaultSafetyMarginMs(10000, 100), 102) << "2 ms of 200 ppm over 10 s + one 100 ms loop";
  EXPECT_EQ(DefaultSafetyMarginMs(1000, 50), 51) << "drift part rounds up to a whole millisecond";
  EXPECT_EQ(DefaultSafetyMarginMs(600000, 10000), 10120);
}

TEST(LeaderElectorOptionsTest, BadOptionsNameTheField) {
  struct Case {
    std::function<void(LeaderElectorOptions&)> edit;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](auto& o) { o.node_id = ""; }, "node_id"},
      {[](auto& o) { o.node_id = "has space"; }, "node_id"},
      {[](auto& o) { o.lease_ms = 0; }, "lease_ms"},
      {[](auto& o) { o.loop_interval_ms = 0; }, "loop_interval_ms"},
      {[](auto& o) { o.loop_interval_ms = 1000; }, "loop_interval_ms"},
      {[](auto& o) { o.safety_margin_ms = 1000; }, "safety_margin_ms"},
      {[](auto& o) { o.safety_margin_ms = -5; }, "safety_margin_ms"},
      {[](auto& o) { o.forbid_campaign_time_ms = -1; }, "forbid_campaign_time_ms"},
  };
  for (const auto& c : cases) {
    LeaderElectorOptions o = TestOptions("a");
    c.edit(o);
    Status s = ValidateLeaderElectorOptions(o);
    EXPECT_EQ(s.code(), StatusCode::kInvalidConfig) << c.field;
    EXPECT_NE(s.message().find(c.field), std::string::npos)
        << "message does not name " << c.field << ": " << s.message();
  }
  EXPECT_TRUE(ValidateLeaderElectorOptions(TestOptions("a")).ok());
}

TEST_F(ElectorTest, StartRejectsBadOptionsAndStartsNothing) {
  CallbackLog log;
  auto o = TestOptions("a");
  o.lease_ms = -1;
  auto e = Make(o, log);
  EXPECT_EQ(e->Start().code(), StatusCode::kInvalidConfig);
  EXPECT_EQ(backend_.Calls(Op::kGetLockHolder), 0) << "an elector with bad options campaigned";
}

TEST_F(ElectorTest, LeaseIsMeasuredFromBeforeTheRequestMinusTheMargin) {
  CallbackLog log;
  backend_.ParkNext(Op::kTryLock, Phase::kAfterCall);
  backend_.ParkNext(Op::kRenewLock, Phase::kBeforeCall);  // keep the first deadline in place
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(backend_.WaitParked(Op::kTryLock)) << "elector never campaigned";
  const MonoTime before = rt_.Now();
  rt_.Advance(300ms);  // a slow answer: the lease must still count from `before`
  backend_.Release(Op::kTryLock);
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); })) << "never became leader";
  LeadershipSnapshot s = e->Snapshot();
  ASSERT_TRUE(s.lease_deadline.has_value());
  EXPECT_EQ(*s.lease_deadline, before + 1000ms - 100ms) << "deadline not counted from the time before the request";
  EXPECT_EQ(s.token, 1u);
  EXPECT_EQ(e->CurrentToken(), 1u);
  EXPECT_EQ(s.observed_leader_id, "a");
  ASSERT_EQ(log.Promotions(), 1u);
  EXPECT_EQ(log.promotions[0], 1u) << "OnBecomeLeader must receive the term's fencing token";
  backend_.Release(Op::kRenewLock);
}

TEST_F(ElectorTest, KnobLeaseFromResponseMeasuresFromTheAnswer) {
  CallbackLog log;
  auto o = TestOptions("a");
  o.testing.lease_from_response = true;
  o.testing.no_safety_margin = true;
  backend_.ParkNext(Op::kTryLock, Phase::kAfterCall);
  backend_.ParkNext(Op::kRenewLock, Phase::kBeforeCall);
  auto e = Make(o, log);
  EXPECT_EQ(e->safety_margin(), 0ms);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(backend_.WaitParked(Op::kTryLock));
  const MonoTime before = rt_.Now();
  rt_.Advance(300ms);
  backend_.Release(Op::kTryLock);
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  EXPECT_EQ(*e->Snapshot().lease_deadline, before + 300ms + 1000ms) << "the planted bug must overestimate the lease";
  backend_.Release(Op::kRenewLock);
}

TEST_F(ElectorTest, LeaseCheckDemotesWhileTheLockThreadIsStuckAndIsLeaderChecksTheDeadline) {
  CallbackLog log;
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  const MonoTime deadline = *e->Snapshot().lease_deadline;
  backend_.ParkNext(Op::kRenewLock, Phase::kBeforeCall);  // the lock thread hangs in the backend
  rt_.Advance(50ms);
  ASSERT_TRUE(backend_.WaitParked(Op::kRenewLock));
  rt_.Advance(deadline - rt_.Now() - 1ms);
  EXPECT_TRUE(e->IsLeader()) << "1 ms before the deadline the node still leads";
  rt_.Advance(1ms);
  EXPECT_FALSE(e->IsLeader()) << "IsLeader must check the deadline, not a flag";
  EXPECT_EQ(e->CurrentToken(), 0u);
  ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; }))
      << "lease-check thread did not demote while the lock thread was stuck";
  EXPECT_EQ(log.Demotions(), 1);
  // The stuck renewal finally reaches the backend and succeeds there: it must not revive the term.
  backend_.Release(Op::kRenewLock);
  ASSERT_TRUE(WaitFor([&] { return backend_.Completed(Op::kRenewLock) == 1; }));
  // Next campaign: the backend still names us; re-entry gives a new term with a new token (a
  // revived old term would keep token 1 and never campaign).
  rt_.Advance(50ms);
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  EXPECT_EQ(e->CurrentToken(), 2u);
  EXPECT_EQ(log.Promotions(), 2u);
}

TEST_F(ElectorTest, RenewalFailuresShorterThanTheLeaseCauseNoDemotion) {
  CallbackLog log;
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  backend_.Fail(Op::kRenewLock, Status::Unavailable("redis down"), -1);
  for (int i = 0; i < 16; ++i) {  // 800 ms of failed renewals, under the 900 ms usable lease
    const int calls = backend_.Calls(Op::kRenewLock);
    rt_.Advance(50ms);
    ASSERT_TRUE(WaitFor([&] { return backend_.Completed(Op::kRenewLock) > calls; }));
    ASSERT_TRUE(e->IsLeader()) << "demoted after only " << (i + 1) * 50 << " ms of outage";
  }
  backend_.ClearFailures();
  const int calls = backend_.Calls(Op::kRenewLock);
  const MonoTime before = rt_.Now() + 50ms;
  rt_.Advance(50ms);
  ASSERT_TRUE(WaitFor([&] { return backend_.Completed(Op::kRenewLock) > calls; }));
  ASSERT_TRUE(WaitFor([&] { return *e->Snapshot().lease_deadline == before + 900ms; })) << "renewal did not extend";
  EXPECT_TRUE(e->IsLeader());
  EXPECT_EQ(log.Demotions(), 0);
  EXPECT_EQ(e->CurrentToken(), 1u) << "a renewal keeps the token";

  // An outage longer than the lease ends the term at the deadline.
  backend_.Fail(Op::kRenewLock, Status::Unavailable("redis down"), -1);
  backend_.Fail(Op::kGetLockHolder, Status::Unavailable("redis down"), -1);
  rt_.Advance(900ms);
  EXPECT_FALSE(e->IsLeader());
  ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; }));
  EXPECT_EQ(log.Demotions(), 1);
}

TEST_F(ElectorTest, BuggifiedSkippedRenewalsEndTheTerm) {
  CallbackLog log;
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  rt_.SetBuggifySite("election.renew.skip");
  for (int i = 0; i < 40 && log.Demotions() == 0; ++i) {
    rt_.Advance(50ms);
    WaitFor([&] { return log.Demotions() > 0; }, 5ms);
  }
  EXPECT_EQ(log.Demotions(), 1) << "skipped renewals did not end the term";
  EXPECT_EQ(backend_.Calls(Op::kRenewLock), 0);
}

TEST_F(ElectorTest, KnobServeWhileDemotingKeepsAnsweringLeader) {
  for (bool knob : {false, true}) {
    CallbackLog log;
    auto o = TestOptions(knob ? "k" : "n");
    o.testing.serve_while_demoting = knob;
    auto e = Make(o, log);
    ASSERT_TRUE(e->Start().ok());
    ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kLeader; }));
    log.HoldDemote(true);
    ASSERT_TRUE(e->Demote(10s).ok());
    ASSERT_TRUE(WaitFor([&] { return log.InDemote(); }));
    EXPECT_EQ(e->IsLeader(), knob) << (knob ? "planted bug inactive" : "a DEMOTING node answered IsLeader");
    log.HoldDemote(false);
    ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; }));
    e->Stop();
  }
}

TEST_F(ElectorTest, StopReleasesTheLockAndAFollowerTakesOverWithAHigherToken) {
  CallbackLog la, lb;
  auto a = Make(TestOptions("a"), la);
  auto b = Make(TestOptions("b"), lb);
  ASSERT_TRUE(a->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return a->IsLeader(); }));
  ASSERT_TRUE(b->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return b->Snapshot().observed_leader_id == "a"; }));
  EXPECT_FALSE(b->IsLeader());
  a->Stop();
  EXPECT_EQ(la.Demotions(), 1) << "Stop must run the demote path before returning";
  EXPECT_EQ(backend_.store().GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "") << "Stop did not release the lock";
  rt_.Advance(50ms);
  ASSERT_TRUE(WaitFor([&] { return b->IsLeader(); })) << "follower did not take over";
  EXPECT_EQ(b->CurrentToken(), 2u);
}

TEST_F(ElectorTest, DemoteOfAFollowerIsRefusedAndChangesNothing) {
  CallbackLog la, lb;
  auto a = Make(TestOptions("a"), la);
  auto b = Make(TestOptions("b"), lb);
  ASSERT_TRUE(a->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return a->IsLeader(); }));
  ASSERT_TRUE(b->Start().ok());
  Status s = b->Demote();
  EXPECT_EQ(s.code(), StatusCode::kNotLeader) << s.ToString();
  EXPECT_NE(s.message().find("'b'"), std::string::npos) << s.message();
  EXPECT_TRUE(a->IsLeader()) << "demoting a follower disturbed the leader";
  EXPECT_EQ(backend_.Calls(Op::kUnlock), 0);
}

TEST_F(ElectorTest, DemoteHonoursForbidCampaignTime) {
  CallbackLog log;
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  ASSERT_TRUE(e->Demote(2s).ok());
  EXPECT_FALSE(e->IsLeader()) << "IsLeader must be false as soon as Demote returns";
  EXPECT_EQ(backend_.store().GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "")
      << "Demote did not release the lock";
  ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; }));
  const int campaigns = backend_.Calls(Op::kGetLockHolder);
  for (int i = 0; i < 39; ++i) {
    rt_.Advance(50ms);
    WaitFor([] { return false; }, 1ms);  // let the lock thread run an iteration
  }
  EXPECT_FALSE(e->IsLeader()) << "campaigned during the forbid time";
  EXPECT_EQ(backend_.Calls(Op::kGetLockHolder), campaigns);
  rt_.Advance(100ms);
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); })) << "did not campaign after the forbid time";
  EXPECT_EQ(e->CurrentToken(), 2u);
}

// The real runtime end to end: two electors on one memory backend hand over leadership.
TEST(LeaderElectorRealRuntimeTest, TwoElectorsHandOverOnStop) {
  Runtime& rt = Runtime::Real();
  CoordinationMemoryBackend backend(rt);
  CallbackLog la, lb;
  LeaderElectorOptions oa = TestOptions("a"), ob = TestOptions("b");
  oa.lease_ms = ob.lease_ms = 400;
  oa.loop_interval_ms = ob.loop_interval_ms = 10;
  oa.safety_margin_ms = ob.safety_margin_ms = -1;
  LeaderElector a(rt, backend, oa, la.Callbacks());
  LeaderElector b(rt, backend, ob, lb.Callbacks());
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return a.IsLeader(); }));
  ASSERT_TRUE(b.Start().ok());
  a.Stop();
  ASSERT_TRUE(WaitFor([&] { return b.IsLeader(); })) << "b never took over";
  EXPECT_FALSE(a.IsLeader());
  EXPECT_GT(b.CurrentToken(), la.promotions.at(0));
}

}  // namespace
}  // namespace kvchaos::election
