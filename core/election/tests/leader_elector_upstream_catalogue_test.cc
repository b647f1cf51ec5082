// Behaviours upstream's elector tests assert (issue 18, "upstream test catalogue"), on the real
// runtime and a memory backend: two electors on different lock keys both lead; Start/Stop
// repeated; every method of a stopped elector answers as a follower's.
#include <gtest/gtest.h>

#include "core/common/real_runtime.h"
#include "core/election/coordination_memory_backend.h"
#include "core/election/leader_elector.h"
#include "core/election/tests/elector_fixture.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;
using testing::CallbackLog;
using testing::TestOptions;

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

}  // namespace
}  // namespace kvchaos::election
