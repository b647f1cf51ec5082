// The coordination contract (coordination_backend.h), checked the same way on every backend —
// memory, file, a real redis-server (the production Lua scripts) and the simulator's Redis
// (sim/sim_redis.h, reached through SimCoordinationClient) — so a copy of the lock rules cannot
// drift from the scripts unnoticed. Each check uses its own keys; `wait(d)` lets at least `d` pass
// on the clock the backend expires leases by (an advanced manual clock, a real sleep, virtual
// time). Leases in the time checks are short (200 ms) and waits generous, so a real server on a
// loaded machine passes too; a backend whose leases count whole seconds (etcd) passes its own
// ContractTiming.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/election/coordination_backend.h"

namespace kvchaos::election::testing {

using ContractWait = std::function<void(Duration)>;

// The lease and TTL the expiry check gives, and how long it then waits for them to run out.
struct ContractTiming {
  Duration short_lease = std::chrono::milliseconds(200);
  Duration expiry_wait = std::chrono::milliseconds(600);
};

// Grants, refusals, re-entry, renew and unlock by the holder only, tokens per key and never reused.
inline void CheckLockContract(CoordinationBackend& b) {
  using namespace std::chrono_literals;
  auto first = b.TryLock("C-lock", "a", 30s, kNoDeadline);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->token, 1u) << "a fresh key starts at token 1";

  auto taken = b.TryLock("C-lock", "b", 30s, kNoDeadline);
  ASSERT_EQ(taken.status().code(), StatusCode::kAlreadyExists) << "a held lock was granted to another holder";
  EXPECT_NE(taken.status().message().find("a"), std::string::npos) << "the refusal must name the holder";
  EXPECT_EQ(b.GetLockHolder("C-lock", kNoDeadline)->token, 1u) << "a refused TryLock consumed a token";

  auto again = b.TryLock("C-lock", "a", 30s, kNoDeadline);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->token, 2u) << "re-entry is a new grant with a new token";

  EXPECT_EQ(b.RenewLock("C-lock", "b", 30s, kNoDeadline).code(), StatusCode::kLockLost) << "a non-holder renewed";
  EXPECT_EQ(b.Unlock("C-lock", "b", kNoDeadline).code(), StatusCode::kLockLost) << "a non-holder unlocked";
  ASSERT_TRUE(b.RenewLock("C-lock", "a", 30s, kNoDeadline).ok());
  Result<LockHolderInfo> holder = b.GetLockHolder("C-lock", kNoDeadline);
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  EXPECT_EQ(holder->holder, "a");
  EXPECT_EQ(holder->token, 2u) << "a renewal keeps the token";
  EXPECT_GT(holder->remaining_ttl, 20s) << "the holder's lease is reported";
  EXPECT_LE(holder->remaining_ttl, 30s);

  ASSERT_TRUE(b.Unlock("C-lock", "a", kNoDeadline).ok());
  EXPECT_EQ(b.Unlock("C-lock", "a", kNoDeadline).code(), StatusCode::kLockLost) << "unlocked twice";
  EXPECT_EQ(b.RenewLock("C-lock", "a", 30s, kNoDeadline).code(), StatusCode::kLockLost) << "renewed after Unlock";
  holder = b.GetLockHolder("C-lock", kNoDeadline);
  ASSERT_TRUE(holder.ok());
  EXPECT_EQ(holder->holder, "") << "Unlock must free the lock";
  EXPECT_EQ(holder->remaining_ttl, Duration::zero());

  auto next = b.TryLock("C-lock", "b", 30s, kNoDeadline);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->token, 3u) << "the token counter survives Unlock";
  auto other = b.TryLock("C-other", "a", 30s, kNoDeadline);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->token, 1u) << "tokens are per key";
  EXPECT_EQ(b.GetLockHolder("C-never", kNoDeadline)->token, 0u) << "a key never granted has token 0";
}

// Leases and values expire on the backend's clock; an expired lock is free for anyone, with a
// higher token.
inline void CheckExpiryContract(CoordinationBackend& b, const ContractWait& wait, const ContractTiming& timing = {}) {
  using namespace std::chrono_literals;
  ASSERT_TRUE(b.TryLock("C-expiry", "a", timing.short_lease, kNoDeadline).ok());
  ASSERT_TRUE(b.SetValueWithTtl("C-ttl/x", "1", timing.short_lease).ok());
  ASSERT_TRUE(b.SetValue("C-ttl/y", "2").ok());
  wait(timing.expiry_wait);
  Result<LockHolderInfo> holder = b.GetLockHolder("C-expiry", kNoDeadline);
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  EXPECT_EQ(holder->holder, "") << "the lock outlived its lease";
  EXPECT_EQ(b.RenewLock("C-expiry", "a", timing.short_lease, kNoDeadline).code(), StatusCode::kLockLost)
      << "renewed an expired lock";
  auto taken = b.TryLock("C-expiry", "b", 30s, kNoDeadline);
  ASSERT_TRUE(taken.ok()) << "an expired lock must be free: " << taken.status().ToString();
  EXPECT_EQ(taken->token, 2u);
  EXPECT_EQ(b.GetValue("C-ttl/x").status().code(), StatusCode::kNotFound) << "a value outlived its TTL";
  Result<std::vector<KeyValue>> list = b.ListValues("C-ttl/");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(*list, (std::vector<KeyValue>{{"C-ttl/y", "2"}})) << "ListValues must skip expired values";
}

// Values: set, replace (dropping a TTL), delete (also of an absent key), listing by prefix sorted.
inline void CheckValueContract(CoordinationBackend& b) {
  using namespace std::chrono_literals;
  ASSERT_TRUE(b.SetValue("C-val/b", "2").ok());
  ASSERT_TRUE(b.SetValueWithTtl("C-val/a", "1", 30s).ok());
  ASSERT_TRUE(b.SetValue("C-valx", "not in the prefix").ok());
  Result<std::vector<KeyValue>> list = b.ListValues("C-val/");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(*list, (std::vector<KeyValue>{{"C-val/a", "1"}, {"C-val/b", "2"}})) << "sorted by key, prefix only";
  ASSERT_TRUE(b.SetValue("C-val/b", "3").ok());
  EXPECT_EQ(*b.GetValue("C-val/b"), "3");
  ASSERT_TRUE(b.DeleteValue("C-val/b").ok());
  EXPECT_EQ(b.GetValue("C-val/b").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(b.DeleteValue("C-val/b").ok()) << "deleting an absent key is OK";
  EXPECT_EQ(b.GetValue("C-never").status().code(), StatusCode::kNotFound);
}

// RaiseTokenFloor: only the holder may raise; the counter becomes max(counter, floor) + 1 and is
// the holding's token (GetLockHolder reports it); later grants stay strictly above it; floors that
// leave no room are refused; precision holds past 2^53 (Lua numbers are doubles).
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

// Upstream's backend tests (issue 18 catalogue): Init again on a live backend keeps its state;
// many lock keys are independent; keys with special characters (printable, no spaces: what
// ValidateKey allows) work for locks, values and prefix listing (glob characters match only
// themselves); a node's info record is overwritten in place.
inline void CheckUpstreamBackendCatalogue(CoordinationBackend& b) {
  using namespace std::chrono_literals;
  ASSERT_TRUE(b.TryLock("U-reinit", "a", 30s, kNoDeadline).ok());
  ASSERT_TRUE(b.Init().ok()) << "re-Init of a live backend";
  EXPECT_EQ(b.GetLockHolder("U-reinit", kNoDeadline)->holder, "a") << "re-Init lost the lock";
  EXPECT_TRUE(b.RenewLock("U-reinit", "a", 30s, kNoDeadline).ok());

  for (int i = 0; i < 40; ++i) {
    const std::string key = "U-many-" + std::to_string(i);
    auto g = b.TryLock(key, "h" + std::to_string(i), 30s, kNoDeadline);
    ASSERT_TRUE(g.ok()) << key << ": " << g.status().ToString();
    EXPECT_EQ(g->token, 1u) << key << ": tokens are per key";
  }
  for (int i = 0; i < 40; ++i) {
    const std::string key = "U-many-" + std::to_string(i);
    EXPECT_EQ(b.GetLockHolder(key, kNoDeadline)->holder, "h" + std::to_string(i)) << key;
    EXPECT_EQ(b.TryLock(key, "other", 30s, kNoDeadline).status().code(), StatusCode::kAlreadyExists) << key;
  }

  for (std::string key : {"U:colon", "U/slash", "U*star", "U?q", "U[br]", "U{tag}", "U%25pct", "U\\back", "U'quote\""}) {
    SCOPED_TRACE(key);
    auto g = b.TryLock(key, "holder:" + key, 30s, kNoDeadline);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ(b.GetLockHolder(key, kNoDeadline)->holder, "holder:" + key);
    EXPECT_TRUE(b.Unlock(key, "holder:" + key, kNoDeadline).ok());
    ASSERT_TRUE(b.SetValue(key, "v:" + key).ok());
    EXPECT_EQ(*b.GetValue(key), "v:" + key);
  }
  ASSERT_TRUE(b.SetValue("U-glob*/a", "1").ok());
  ASSERT_TRUE(b.SetValue("U-globX/b", "2").ok());
  auto listed = b.ListValues("U-glob*/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(*listed, (std::vector<KeyValue>{{"U-glob*/a", "1"}})) << "a '*' in a prefix matched other keys";

  const std::string info_key = std::string(kNodeInfoKeyPrefix) + "U-node";
  ASSERT_TRUE(b.SetValueWithTtl(info_key, "{\"host\":\"h1\"}", 30s).ok());
  ASSERT_TRUE(b.SetValueWithTtl(info_key, "{\"host\":\"h2\"}", 30s).ok());
  EXPECT_EQ(*b.GetValue(info_key), "{\"host\":\"h2\"}") << "node info was not overwritten";
}

// The whole contract, on a fresh backend.
inline void CheckCoordinationContract(CoordinationBackend& b, const ContractWait& wait,
                                      const ContractTiming& timing = {}) {
  {
    SCOPED_TRACE("locks");
    CheckLockContract(b);
  }
  {
    SCOPED_TRACE("values");
    CheckValueContract(b);
  }
  {
    SCOPED_TRACE("expiry");
    CheckExpiryContract(b, wait, timing);
  }
  {
    SCOPED_TRACE("token floor");
    CheckRaiseTokenFloorContract(b);
  }
  {
    SCOPED_TRACE("upstream backend catalogue");
    CheckUpstreamBackendCatalogue(b);
  }
}

}  // namespace kvchaos::election::testing
