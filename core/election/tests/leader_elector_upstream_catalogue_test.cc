// Behaviours upstream's elector tests assert (issue 18, "upstream test catalogue"), on the real
// runtime and a memory backend: two electors on different lock keys both lead; Start/Stop
// repeated; every method of a stopped elector answers as a follower's; callbacks set after
// construction are the ones run; IsLeader and friends read while terms begin and end (the tsan
// preset flags a data race here). On the manual clock: a plain renewal that finds another holder
// ends the term through the demote callback.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/common/real_runtime.h"
#include "core/election/coordination_memory_backend.h"
#include "core/election/leader_elector.h"
#include "core/election/tests/elector_fixture.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;
using testing::CallbackLog;
using testing::ElectorTest;
using testing::Op;
using testing::TestOptions;
using testing::WaitFor;

LeaderElectorOptions FastOptions(std::string id, std::string lock_key = std::string(kLeaderLockKey)) {
  LeaderElectorOptions o = TestOptions(std::move(id));
  o.lease_ms = 2000;
  o.loop_interval_ms = 10;
  o.safety_margin_ms = -1;
  o.lock_key = std::move(lock_key);
  return o;
}

TEST(ElectorUpstreamCatalogueTest, TwoElectorsOnDifferentKeysBothLead) {
  Runtime& rt = Runtime::Real();
  CoordinationMemoryBackend backend(rt);
  CallbackLog la, lb;
  LeaderElector a(rt, backend, FastOptions("a", "key-a"), la.Callbacks());
  LeaderElector b(rt, backend, FastOptions("b", "key-b"), lb.Callbacks());
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(b.Start().ok());
  EXPECT_TRUE(testing::WaitFor([&] { return a.IsLeader(); })) << "a did not lead key-a";
  EXPECT_TRUE(testing::WaitFor([&] { return b.IsLeader(); })) << "b did not lead key-b";
  EXPECT_EQ(backend.GetLockHolder("key-a", kNoDeadline)->holder, "a");
  EXPECT_EQ(backend.GetLockHolder("key-b", kNoDeadline)->holder, "b");
}

TEST(ElectorUpstreamCatalogueTest, StartAndStopRepeated) {
  Runtime& rt = Runtime::Real();
  CoordinationMemoryBackend backend(rt);
  CallbackLog log;
  LeaderElector e(rt, backend, FastOptions("a"), log.Callbacks());
  FencingToken last = 0;
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_TRUE(e.Start().ok());
    ASSERT_TRUE(testing::WaitFor([&] { return e.IsLeader(); })) << "did not lead after a restart";
    EXPECT_GT(e.CurrentToken(), last) << "a new term must have a newer token";
    last = e.CurrentToken();
    e.Stop();
    EXPECT_FALSE(e.IsLeader());
    EXPECT_EQ(backend.GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "") << "Stop did not release the lock";
    e.Stop();  // idempotent
  }
  EXPECT_EQ(log.Promotions(), 3u);
  EXPECT_EQ(log.Demotions(), 3);
}

TEST(ElectorUpstreamCatalogueTest, EveryMethodOfAStoppedElectorAnswersAsAFollower) {
  Runtime& rt = Runtime::Real();
  CoordinationMemoryBackend backend(rt);
  CallbackLog log;
  LeaderElector e(rt, backend, FastOptions("a"), log.Callbacks());
  for (int pass = 0; pass < 2; ++pass) {  // never started, then started and stopped
    SCOPED_TRACE(pass == 0 ? "never started" : "stopped");
    EXPECT_FALSE(e.IsLeader());
    EXPECT_EQ(e.state(), ElectorState::kFollower);
    EXPECT_EQ(e.CurrentToken(), 0u);
    EXPECT_FALSE(e.Snapshot().is_leader);
    EXPECT_EQ(e.Demote().code(), StatusCode::kNotLeader);
    EXPECT_EQ(e.RaiseTokenAbove(1, 5).status().code(), StatusCode::kNotLeader);
    EXPECT_FALSE(e.WaitForState(ElectorState::kLeader, rt.Now() + 50ms));
    e.Stop();
    if (pass == 0) {
      ASSERT_TRUE(e.Start().ok());
      ASSERT_TRUE(testing::WaitFor([&] { return e.IsLeader(); }));
      e.Stop();
    }
  }
  EXPECT_EQ(log.Promotions(), 1u);
}

TEST(ElectorUpstreamCatalogueTest, CallbacksSetAfterConstructionAreTheOnesRun) {
  Runtime& rt = Runtime::Real();
  CoordinationMemoryBackend backend(rt);
  CallbackLog constructed, set_later, while_running;
  LeaderElector e(rt, backend, FastOptions("a"), constructed.Callbacks());
  ASSERT_TRUE(e.SetCallbacks(set_later.Callbacks()).ok());
  ASSERT_TRUE(e.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e.IsLeader(); }));
  Status refused = e.SetCallbacks(while_running.Callbacks());
  EXPECT_EQ(refused.code(), StatusCode::kAlreadyExists) << "callbacks replaced under running threads: "
                                                        << refused.ToString();
  e.Stop();
  EXPECT_EQ(set_later.Promotions(), 1u) << "the callbacks set after construction were not run on promotion";
  EXPECT_EQ(set_later.Demotions(), 1) << "the callbacks set after construction were not run on demotion";
  EXPECT_EQ(constructed.Promotions(), 0u) << "the replaced callbacks still ran";
  EXPECT_EQ(while_running.Promotions() + static_cast<size_t>(while_running.Demotions()), 0u)
      << "a refused SetCallbacks took effect";
}

TEST(ElectorUpstreamCatalogueTest, IsLeaderReadWhileTermsBeginAndEnd) {
  Runtime& rt = Runtime::Real();
  CoordinationMemoryBackend backend(rt);
  CallbackLog log;
  LeaderElector e(rt, backend, FastOptions("a"), log.Callbacks());
  ASSERT_TRUE(e.Start().ok());
  std::atomic<bool> done{false};
  std::atomic<int> inconsistent{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      FencingToken newest = 0;
      while (!done.load()) {
        (void)e.IsLeader();
        const FencingToken token = e.CurrentToken();
        const LeadershipSnapshot snap = e.Snapshot();
        (void)e.state();
        // Every term has a newer token, so a reader never sees the token go back; a snapshot that
        // says "leader" is of a LEADER in a term.
        if (token != 0 && token < newest) inconsistent.fetch_add(1);
        if (token != 0) newest = token;
        if (snap.is_leader && (snap.state != ElectorState::kLeader || snap.token == 0)) inconsistent.fetch_add(1);
      }
    });
  }
  // Each term is ended by Demote (campaigning again at once), so the next begins with a newer token.
  constexpr int kTerms = 20;
  int terms = 0;
  FencingToken last = 0;
  for (; terms < kTerms; ++terms) {
    if (!WaitFor([&] { return e.CurrentToken() > last; })) break;
    last = e.CurrentToken();
    if (!e.Demote(0ms).ok()) break;
  }
  done = true;
  for (auto& t : readers) t.join();
  e.Stop();
  ASSERT_EQ(terms, kTerms) << "term " << terms << " never began";
  EXPECT_EQ(inconsistent.load(), 0) << "readers saw a token go back or a leader snapshot without a term";
  EXPECT_GE(log.Promotions(), static_cast<size_t>(kTerms)) << "a term seen as LEADER was never promoted";
}

TEST_F(ElectorTest, APlainRenewalThatFindsAnotherHolderDemotesThroughTheCallback) {
  CallbackLog log;
  auto e = Make(TestOptions("a"), log);
  ASSERT_TRUE(e->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return e->IsLeader(); }));
  const MonoTime lease_deadline = *e->Snapshot().lease_deadline;
  // The key moved to "b" on the server (say a's key expired there first); a's lease is still valid.
  ASSERT_TRUE(backend_.store().Unlock(kLeaderLockKey, "a", kNoDeadline).ok());
  ASSERT_TRUE(backend_.store().TryLock(kLeaderLockKey, "b", 1000ms, kNoDeadline).ok());
  const int renewals = backend_.Calls(Op::kRenewLock);
  rt_.Advance(50ms);  // the next lock-thread round renews
  ASSERT_TRUE(WaitFor([&] { return e->state() == ElectorState::kFollower; }))
      << "a renewal refused for another holder did not demote";
  EXPECT_LT(rt_.Now(), lease_deadline) << "the demotion must come from the renewal, not the lease running out";
  EXPECT_GT(backend_.Calls(Op::kRenewLock), renewals);
  EXPECT_EQ(log.Demotions(), 1) << "OnNoLongerLeader did not run";
  EXPECT_FALSE(e->IsLeader());
  EXPECT_EQ(e->CurrentToken(), 0u);
  EXPECT_EQ(backend_.store().GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "b")
      << "the demoted node disturbed the new holder's lock";
}

}  // namespace
}  // namespace kvchaos::election
