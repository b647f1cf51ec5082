// The RaiseTokenFloor contract, checked the same way on every coordination backend (memory, file,
// real Redis): only the holder may raise; the counter becomes max(counter, floor) + 1 and is the
// holding's token (GetLockHolder reports it); later grants stay strictly above it; floors that
// leave no room are refused; precision holds past 2^53 (Lua numbers are doubles).
#pragma once

#include <gtest/gtest.h>

#include <chrono>

#include "core/election/coordination_backend.h"

namespace kvchaos::election::testing {

inline void CheckRaiseTokenFloorContract(CoordinationBackend& b) {
  using namespace std::chrono_literals;
  auto first = b.TryLock("F", "a", 30s, kNoDeadline);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->token, 1u) << "a fresh key starts at token 1";

  auto not_holder = b.RaiseTokenFloor("F", "b", 10, kNoDeadline);
  EXPECT_EQ(not_holder.status().code(), StatusCode::kLockLost) << "a non-holder raised the token";
  EXPECT_EQ(b.GetLockHolder("F", kNoDeadline)->token, 1u) << "a refused raise changed the counter";
  EXPECT_EQ(b.RaiseTokenFloor("never-locked", "a", 10, kNoDeadline).status().code(), StatusCode::kLockLost);

  auto raised = b.RaiseTokenFloor("F", "a", 10, kNoDeadline);
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ(*raised, 11u) << "counter must become floor + 1 when below the floor";
  auto holder = b.GetLockHolder("F", kNoDeadline);
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  EXPECT_EQ(holder->holder, "a") << "raising must keep the holding";
  EXPECT_EQ(holder->token, 11u) << "the raised token is the holding's token";

  auto above = b.RaiseTokenFloor("F", "a", 5, kNoDeadline);
  ASSERT_TRUE(above.ok()) << above.status().ToString();
  EXPECT_EQ(*above, 12u) << "max(counter 11, floor 5) + 1: a floor below the counter still gives a new token";

  ASSERT_TRUE(b.Unlock("F", "a", kNoDeadline).ok());
  EXPECT_EQ(b.RaiseTokenFloor("F", "a", 20, kNoDeadline).status().code(), StatusCode::kLockLost)
      << "raised after Unlock";
  auto next = b.TryLock("F", "b", 30s, kNoDeadline);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->token, 13u) << "grants after a raise must stay strictly above it";

  // Past 2^53 a double cannot tell n from n + 1: the comparison must be exact.
  const FencingToken big = (FencingToken{1} << 53) + 1;
  auto big_raise = b.RaiseTokenFloor("F", "b", big, kNoDeadline);
  ASSERT_TRUE(big_raise.ok()) << big_raise.status().ToString();
  EXPECT_EQ(*big_raise, big + 1);
  EXPECT_EQ(b.TryLock("F", "b", 30s, kNoDeadline)->token, big + 2) << "re-entry after a big raise";
  EXPECT_EQ(*b.RaiseTokenFloor("F", "b", big, kNoDeadline), big + 3) << "the counter (2^53 + 3) is above the floor";

  auto too_big = b.RaiseTokenFloor("F", "b", kMaxTokenFloor + 1, kNoDeadline);
  EXPECT_EQ(too_big.status().code(), StatusCode::kInvalidArgument) << "a floor with no room above it was accepted";
  EXPECT_NE(too_big.status().message().find("floor"), std::string::npos) << too_big.status().message();
  EXPECT_EQ(b.GetLockHolder("F", kNoDeadline)->token, big + 3) << "a refused floor changed the counter";
}

}  // namespace kvchaos::election::testing
