// CoordinationMemoryBackend: lock, expiry, fencing tokens and TTL'd values on a manual clock.
#include "core/election/coordination_memory_backend.h"

#include <gtest/gtest.h>

#include "core/election/tests/manual_runtime.h"
#include "core/election/tests/coordination_contract.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;
using testing::ManualRuntime;

TEST(MemoryBackendTest, LockIsExclusiveUntilItExpires) {
  ManualRuntime rt;
  CoordinationMemoryBackend b(rt);
  auto a = b.TryLock("L", "a", 1000ms, kNoDeadline);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto other = b.TryLock("L", "b", 1000ms, kNoDeadline);
  ASSERT_EQ(other.status().code(), StatusCode::kAlreadyExists) << "a second holder got a held lock";
  EXPECT_NE(other.status().message().find("'a'"), std::string::npos) << other.status().message();
  rt.Advance(999ms);
  EXPECT_FALSE(b.TryLock("L", "b", 1000ms, kNoDeadline).ok()) << "lock expired before its lease";
  rt.Advance(1ms);
  auto bgrant = b.TryLock("L", "b", 1000ms, kNoDeadline);
  ASSERT_TRUE(bgrant.ok()) << "expired lock was not free: " << bgrant.status().ToString();
  EXPECT_GT(bgrant->token, a->token) << "tokens must strictly increase";
}

TEST(MemoryBackendTest, TokensIncreaseOnEveryGrantIncludingReentryAndSurviveUnlock) {
  ManualRuntime rt;
  CoordinationMemoryBackend b(rt);
  FencingToken last = 0;
  for (int i = 0; i < 3; ++i) {
    auto g = b.TryLock("L", "a", 1000ms, kNoDeadline);  // re-entry by the same holder
    ASSERT_TRUE(g.ok());
    EXPECT_GT(g->token, last);
    last = g->token;
  }
  ASSERT_TRUE(b.Unlock("L", "a", kNoDeadline).ok());
  auto g = b.TryLock("L", "b", 1000ms, kNoDeadline);
  ASSERT_TRUE(g.ok());
  EXPECT_GT(g->token, last) << "token counter must survive Unlock";
  auto other_key = b.TryLock("M", "a", 1000ms, kNoDeadline);
  ASSERT_TRUE(other_key.ok());
  EXPECT_EQ(other_key->token, 1u) << "tokens are per key";
}

TEST(MemoryBackendTest, RenewAndUnlockOnlyByTheHolder) {
  ManualRuntime rt;
  CoordinationMemoryBackend b(rt);
  ASSERT_TRUE(b.TryLock("L", "a", 1000ms, kNoDeadline).ok());
  EXPECT_EQ(b.RenewLock("L", "b", 1000ms, kNoDeadline).code(), StatusCode::kLockLost);
  EXPECT_EQ(b.Unlock("L", "b", kNoDeadline).code(), StatusCode::kLockLost);
  rt.Advance(800ms);
  ASSERT_TRUE(b.RenewLock("L", "a", 1000ms, kNoDeadline).ok());
  rt.Advance(800ms);
  auto h = b.GetLockHolder("L", kNoDeadline);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->holder, "a") << "renewal did not restart the lease";
  EXPECT_EQ(h->remaining_ttl, 200ms);
  EXPECT_EQ(h->token, 1u);
  rt.Advance(200ms);
  EXPECT_EQ(b.RenewLock("L", "a", 1000ms, kNoDeadline).code(), StatusCode::kLockLost) << "renewed an expired lock";
  h = b.GetLockHolder("L", kNoDeadline);
  EXPECT_EQ(h->holder, "");
  EXPECT_EQ(h->remaining_ttl, 0ms);
}

TEST(MemoryBackendTest, ValuesWithAndWithoutTtlAndSortedPrefixListing) {
  ManualRuntime rt;
  CoordinationMemoryBackend b(rt);
  ASSERT_TRUE(b.SetValue("n/b", "2").ok());
  ASSERT_TRUE(b.SetValueWithTtl("n/a", "1", 500ms).ok());
  ASSERT_TRUE(b.SetValue("m/x", "9").ok());
  auto list = b.ListValues("n/");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, (std::vector<KeyValue>{{"n/a", "1"}, {"n/b", "2"}}));
  rt.Advance(500ms);
  EXPECT_EQ(b.GetValue("n/a").status().code(), StatusCode::kNotFound) << "TTL'd value outlived its TTL";
  EXPECT_EQ(*b.ListValues("n/"), (std::vector<KeyValue>{{"n/b", "2"}}));
  ASSERT_TRUE(b.SetValueWithTtl("n/b", "3", 100ms).ok());
  ASSERT_TRUE(b.SetValue("n/b", "4").ok());
  rt.Advance(1000ms);
  EXPECT_EQ(*b.GetValue("n/b"), "4") << "SetValue must clear an earlier TTL";
  ASSERT_TRUE(b.DeleteValue("n/b").ok());
  ASSERT_TRUE(b.DeleteValue("n/b").ok()) << "deleting an absent key is OK";
  EXPECT_FALSE(b.GetValue("n/b").ok());
}

TEST(MemoryBackendTest, BadInputIsRejectedAndChangesNothing) {
  ManualRuntime rt;
  CoordinationMemoryBackend b(rt);
  EXPECT_EQ(b.TryLock("", "a", 1000ms, kNoDeadline).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b.TryLock("L", "a b", 1000ms, kNoDeadline).status().code(), StatusCode::kInvalidArgument);
  auto zero = b.TryLock("L", "a", 0ms, kNoDeadline);
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("lease"), std::string::npos) << zero.status().message();
  EXPECT_EQ(b.SetValueWithTtl("k", "v", -1ms).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b.GetLockHolder("L", kNoDeadline)->token, 0u) << "a rejected TryLock must not consume a token";
  EXPECT_FALSE(b.GetValue("k").ok());
}

TEST(MemoryBackendTest, CoordinationContract) {
  ManualRuntime rt;
  CoordinationMemoryBackend b(rt);
  testing::CheckCoordinationContract(b, [&](Duration d) { rt.Advance(d); });
}

TEST(MemoryBackendTest, RaiseTokenFloorAfterAWipeAndOnAnExpiredHolding) {
  ManualRuntime rt;
  CoordinationMemoryBackend b(rt);
  ASSERT_EQ(b.TryLock("L", "a", 1000ms, kNoDeadline)->token, 1u);
  ASSERT_EQ(b.TryLock("L", "a", 1000ms, kNoDeadline)->token, 2u);
  b.Wipe();  // a coordination service restarted without its data
  EXPECT_EQ(b.GetLockHolder("L", kNoDeadline)->holder, "") << "the wipe kept the lock";
  auto again = b.TryLock("L", "b", 1000ms, kNoDeadline);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->token, 1u) << "after a wipe the counter starts over (the hole RaiseTokenFloor closes)";
  auto raised = b.RaiseTokenFloor("L", "b", 2, kNoDeadline);
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ(*raised, 3u) << "the holder's token must pass the floor a fenced resource saw";
  rt.Advance(1000ms);
  EXPECT_EQ(b.RaiseTokenFloor("L", "b", 5, kNoDeadline).status().code(), StatusCode::kLockLost)
      << "raised an expired holding";
  EXPECT_EQ(b.TryLock("L", "c", 1000ms, kNoDeadline)->token, 4u)
      << "the refused raise on the expired holding changed the counter";
}

}  // namespace
}  // namespace kvchaos::election
