// SimRedis and SimMetaIndex: Redis lock semantics on the backend's clock, fencing tokens that
// only grow (and the regression a restart without persistence causes), values with TTL, and the
// meta index's independent count of stale writes with the production fence on and planted off.
#include "sim/sim_redis.h"

#include <gtest/gtest.h>

#include "sim/sim_meta_index.h"

namespace kvchaos::sim {
namespace {

using Op = BackendRequest::Op;
constexpr int64_t kSecond = 1'000'000'000;

class SimRedisTest : public ::testing::Test {
 protected:
  SimRedisTest() : backend_(rt_.AddNode("redis")), redis_(rt_, backend_) {}
  BackendReply Do(Op op, std::string key, std::string arg = {}, int64_t duration_ns = 0, uint64_t token = 0) {
    return redis_.Apply(BackendRequest{op, std::move(key), std::move(arg), duration_ns, token, 0});
  }
  void AdvanceTo(int64_t t) { rt_.RunUntil(t); }

  SimRuntime rt_;
  int backend_;
  SimRedis redis_;
};

TEST_F(SimRedisTest, LockGrantsStrictlyIncreasingTokensAndBlocksOthers) {
  const BackendReply a = Do(Op::kTryLock, "L", "n1", 10 * kSecond);
  ASSERT_TRUE(a.status.ok()) << a.status.ToString();
  const BackendReply b = Do(Op::kTryLock, "L", "n2", 10 * kSecond);
  EXPECT_EQ(b.status.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(b.status.message().find("held by 'n1'"), std::string::npos) << b.status.message();
  const BackendReply again = Do(Op::kTryLock, "L", "n1", 10 * kSecond);
  ASSERT_TRUE(again.status.ok());
  EXPECT_GT(again.token, a.token) << "re-entry must grant a new, larger token";
  const BackendReply holder = Do(Op::kGetLockHolder, "L");
  EXPECT_EQ(holder.text, "n1");
  EXPECT_EQ(holder.token, again.token);
  EXPECT_EQ(holder.ttl_ns, 10 * kSecond);
}

TEST_F(SimRedisTest, LockExpiresByTheBackendWallClock) {
  ASSERT_TRUE(Do(Op::kTryLock, "L", "n1", 10 * kSecond).status.ok());
  AdvanceTo(5 * kSecond);
  EXPECT_TRUE(Do(Op::kRenewLock, "L", "n1", 10 * kSecond).status.ok());
  AdvanceTo(14 * kSecond);
  EXPECT_EQ(Do(Op::kGetLockHolder, "L").text, "n1") << "renewed at 5 s, must hold until 15 s";
  rt_.StepWall(backend_, std::chrono::seconds(2));  // the backend's clock jumps: the key expires early
  EXPECT_EQ(Do(Op::kGetLockHolder, "L").text, "");
  EXPECT_EQ(Do(Op::kRenewLock, "L", "n1", kSecond).status.code(), StatusCode::kLockLost);
  EXPECT_TRUE(Do(Op::kTryLock, "L", "n2", kSecond).status.ok());
  EXPECT_EQ(Do(Op::kUnlock, "L", "n1").status.code(), StatusCode::kLockLost) << "only the holder may unlock";
  EXPECT_TRUE(Do(Op::kUnlock, "L", "n2").status.ok());
}

TEST_F(SimRedisTest, RestartWithoutPersistenceRegressesTokens) {
  uint64_t last = 0;
  for (int i = 0; i < 3; ++i) last = Do(Op::kTryLock, "L", "n1", kSecond).token;
  redis_.Crash();
  EXPECT_FALSE(redis_.up());
  redis_.Restart(true);
  EXPECT_EQ(Do(Op::kTryLock, "L", "n1", kSecond).token, last + 1) << "persistent restart keeps the counter";
  EXPECT_EQ(redis_.token_regressions(), 0u);
  redis_.Crash();
  redis_.Restart(false);
  EXPECT_EQ(Do(Op::kTryLock, "L", "n1", kSecond).token, 1u);
  EXPECT_EQ(redis_.token_regressions(), 1u) << "the ground truth must notice the counter going back";
}

TEST_F(SimRedisTest, ValuesWithTtlAndSortedPrefixList) {
  ASSERT_TRUE(Do(Op::kSetValue, "hb_b", "2").status.ok());
  ASSERT_TRUE(Do(Op::kSetValueWithTtl, "hb_a", "1", kSecond).status.ok());
  ASSERT_TRUE(Do(Op::kSetValue, "other", "x").status.ok());
  BackendReply list = Do(Op::kListValues, "hb_");
  ASSERT_EQ(list.values.size(), 2u);
  EXPECT_EQ(list.values[0].key, "hb_a");
  EXPECT_EQ(list.values[1].key, "hb_b");
  AdvanceTo(2 * kSecond);
  EXPECT_EQ(Do(Op::kGetValue, "hb_a").status.code(), StatusCode::kNotFound) << "the TTL'd value must expire";
  EXPECT_EQ(Do(Op::kListValues, "hb_").values.size(), 1u);
  EXPECT_EQ(Do(Op::kGetValue, "hb_b").text, "2");
}

Status Put(SimMetaIndex& index, int host, uint64_t token) {
  MetaIndexRequest r;
  r.op = MetaIndexRequest::Op::kPut;
  r.token = token;
  r.writes = {meta::MetaWrite{"k", {{"f", "v"}}}};
  r.from_host = host;
  return index.Apply(r).status;
}

TEST(SimMetaIndexTest, TheProductionFenceRejectsOlderTokensAndTheTruthCountsStaleness) {
  SimRuntime rt;
  const int host = rt.AddNode("meta-index");
  SimMetaIndex fenced(rt, host, nullptr);
  EXPECT_TRUE(Put(fenced, 0, 5).ok());
  EXPECT_TRUE(Put(fenced, 1, 6).ok());
  EXPECT_EQ(Put(fenced, 0, 5).code(), StatusCode::kStaleFencingToken);
  EXPECT_EQ(fenced.counters().stale_rejected, 1u);
  EXPECT_EQ(fenced.counters().stale_accepted, 0u);

  SimMetaIndex open(rt, host, nullptr, meta::LocalMetaIndexer::TestingKnobs{.skip_fence_check = true});
  EXPECT_TRUE(Put(open, 0, 5).ok());
  EXPECT_TRUE(Put(open, 1, 6).ok());
  EXPECT_TRUE(Put(open, 0, 5).ok()) << "the planted bug lets an older token through";
  EXPECT_EQ(open.counters().stale_accepted, 1u) << "staleness is measured whether or not the fence checks";
}

TEST(SimMetaIndexTest, ARefusalOfTheLockHoldersOwnTokenIsCounted) {
  SimRuntime rt;
  const int host = rt.AddNode("meta-index");
  SimMetaIndex index(rt, host, [](int from, uint64_t token) { return from == 1 && token == 3; });
  ASSERT_TRUE(Put(index, 0, 7).ok());
  EXPECT_EQ(Put(index, 1, 3).code(), StatusCode::kStaleFencingToken);
  EXPECT_EQ(index.counters().holder_writes_rejected, 1u) << "the holder's own token was refused: a leader that cannot write";
  EXPECT_EQ(Put(index, 2, 3).code(), StatusCode::kStaleFencingToken);
  EXPECT_EQ(index.counters().holder_writes_rejected, 1u) << "a non-holder's refusal is the fence doing its job";
}

}  // namespace
}  // namespace kvchaos::sim
