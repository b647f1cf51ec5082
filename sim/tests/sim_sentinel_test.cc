// SimSentinel: a write reaches the replica only after its lag, in order; a replication cut holds
// the stream back; a failover promotes the replica with what it had received, so a lagging
// promotion loses the lock key and the newest fencing counter (a second holder, a repeated token)
// while an in-sync one keeps both; and the nodes' client follows the new primary (the contract
// holds through a failover).
#include "sim/sim_sentinel.h"

#include <gtest/gtest.h>

#include "core/election/tests/coordination_contract.h"
#include "sim/sim_coordination_client.h"
#include "sim/sim_network.h"

namespace kvchaos::sim {
namespace {

using Op = BackendRequest::Op;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1'000'000'000;

SimSentinelOptions Options() {
  SimSentinelOptions o;
  o.replication_lag_min_ns = 2 * kMs;
  o.replication_lag_max_ns = 4 * kMs;
  o.promotion_delay_min_ns = 2 * kSecond;
  o.promotion_delay_max_ns = 3 * kSecond;
  return o;
}

class SimSentinelTest : public ::testing::Test {
 protected:
  SimSentinelTest()
      : primary_host_(rt_.AddNode("redis")),
        replica_host_(rt_.AddNode("redis-replica")),
        primary_(rt_, primary_host_),
        replica_(rt_, replica_host_, primary_.truth()),
        sentinel_(rt_, primary_, replica_, Rng(7), Options()) {}
  BackendReply Do(Op op, std::string key, std::string arg = {}, int64_t duration_ns = 0, uint64_t token = 0) {
    return sentinel_.primary().Apply(BackendRequest{op, std::move(key), std::move(arg), duration_ns, token, 0});
  }
  void RunFor(int64_t ns) { rt_.RunUntil(rt_.true_now() + ns); }
  void FailOverAndPromote() {
    ASSERT_TRUE(sentinel_.Failover());
    EXPECT_FALSE(primary_.up()) << "the primary dies in a failover";
    EXPECT_TRUE(sentinel_.IsPrimary(primary_)) << "clients are sent to the dead primary until the promotion";
    const int64_t delay = sentinel_.promotion_at() - rt_.true_now();
    EXPECT_GE(delay, 2 * kSecond) << "the promotion delay is drawn within the options' bounds";
    EXPECT_LE(delay, 3 * kSecond);
    rt_.RunUntil(sentinel_.promotion_at() + 1);
    ASSERT_TRUE(sentinel_.IsPrimary(replica_)) << "the replica must be promoted at " << sentinel_.promotion_at();
  }

  SimRuntime rt_;
  int primary_host_;
  int replica_host_;
  SimRedis primary_;
  SimRedis replica_;
  SimSentinel sentinel_;
};

TEST_F(SimSentinelTest, WritesReachTheReplicaAfterTheirLagInOrder) {
  ASSERT_TRUE(Do(Op::kSetValue, "k", "1").status.ok());
  ASSERT_TRUE(Do(Op::kSetValue, "k", "2").status.ok());
  EXPECT_FALSE(replica_.StateOf("k").value.has_value()) << "the replica has nothing before the lag";
  RunFor(1 * kMs);
  EXPECT_FALSE(replica_.StateOf("k").value.has_value()) << "the lag is at least 2 ms";
  RunFor(4 * kMs);
  ASSERT_TRUE(replica_.StateOf("k").value.has_value()) << "the lag is at most 4 ms";
  EXPECT_EQ(replica_.StateOf("k").value->value, "2") << "writes must arrive in the order applied";
  EXPECT_EQ(sentinel_.writes_replicated(), 2u);
}

TEST_F(SimSentinelTest, ACutHoldsTheStreamBackAndTheBacklogFollows) {
  sentinel_.CutReplication(true);
  ASSERT_TRUE(Do(Op::kSetValue, "k", "held").status.ok());
  RunFor(1 * kSecond);
  EXPECT_FALSE(replica_.StateOf("k").value.has_value()) << "nothing crosses a cut replication link";
  sentinel_.CutReplication(false);
  RunFor(5 * kMs);
  ASSERT_TRUE(replica_.StateOf("k").value.has_value()) << "the backlog must follow once the cut ends";
  EXPECT_EQ(replica_.StateOf("k").value->value, "held");
}

TEST_F(SimSentinelTest, InSyncPromotionKeepsTheLockAndTheCounter) {
  const BackendReply grant = Do(Op::kTryLock, "L", "n1", 10 * kSecond);
  ASSERT_TRUE(grant.status.ok()) << grant.status.ToString();
  RunFor(10 * kMs);  // past the lag: the replica has the grant
  FailOverAndPromote();
  const BackendReply holder = Do(Op::kGetLockHolder, "L");
  EXPECT_EQ(holder.text, "n1") << "an in-sync replica keeps the lock";
  EXPECT_EQ(holder.token, grant.token) << "... and the fencing counter";
  EXPECT_EQ(Do(Op::kTryLock, "L", "n2", 10 * kSecond).status.code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(Do(Op::kRenewLock, "L", "n1", 10 * kSecond).status.ok()) << "the holder renews on the new primary";
  EXPECT_EQ(sentinel_.writes_lost(), 0u);
  EXPECT_EQ(primary_.duplicate_holders(), 0u);
  EXPECT_EQ(primary_.token_regressions(), 0u);
}

TEST_F(SimSentinelTest, LaggingPromotionLosesTheLockAndTheNewestToken) {
  ASSERT_TRUE(Do(Op::kTryLock, "L", "n1", 3 * kSecond).status.ok());
  RunFor(10 * kMs);
  sentinel_.CutReplication(true);  // the replica falls behind from here
  RunFor(1 * kSecond);
  ASSERT_TRUE(Do(Op::kRenewLock, "L", "n1", 3 * kSecond).status.ok());
  ASSERT_TRUE(Do(Op::kUnlock, "L", "n1").status.ok());
  const BackendReply newest = Do(Op::kTryLock, "L", "n1", 10 * kSecond);  // token 2, the replica never sees it
  ASSERT_TRUE(newest.status.ok());
  FailOverAndPromote();  // 2-3 s later: the replica's copy (granted 3 s, never renewed) has expired
  EXPECT_EQ(sentinel_.writes_lost(), 3u) << "the renewal, the unlock and the grant were held back";
  EXPECT_EQ(Do(Op::kGetLockHolder, "L").text, "") << "the promoted replica lacks the newest grant";
  const BackendReply second = Do(Op::kTryLock, "L", "n2", 10 * kSecond);
  ASSERT_TRUE(second.status.ok()) << "the lock is free on the promoted replica: " << second.status.ToString();
  EXPECT_EQ(second.token, newest.token) << "the replica's counter was behind: the token repeats";
  EXPECT_EQ(primary_.duplicate_holders(), 1u) << "n1's lease (10 s, granted on the old primary) still ran";
  EXPECT_EQ(primary_.token_regressions(), 1u);
  // RaiseTokenFloor (what a new leader does when the meta index has seen a newer token) puts the
  // token back above every earlier one.
  const BackendReply raised = Do(Op::kRaiseTokenFloor, "L", "n2", 0, newest.token);
  ASSERT_TRUE(raised.status.ok());
  EXPECT_GT(raised.token, newest.token);
}

TEST_F(SimSentinelTest, WritesInFlightWhenThePrimaryDiesAreLost) {
  ASSERT_TRUE(Do(Op::kSetValue, "k", "late").status.ok());
  FailOverAndPromote();
  EXPECT_EQ(sentinel_.writes_lost(), 1u) << "the write had not reached the replica (lag >= 2 ms)";
  EXPECT_FALSE(replica_.StateOf("k").value.has_value());
  EXPECT_FALSE(sentinel_.Failover()) << "one replica: no second failover";
  EXPECT_EQ(sentinel_.promotions(), 1u);
}

// The nodes' client follows the sentinels: refused while the dead primary is named, served by the
// promoted replica after, with the coordination contract intact on it.
TEST(SimSentinelClientTest, FollowsThePromotedReplica) {
  SimRuntime rt;
  const int node = rt.AddNode("n1");
  const int primary_host = rt.AddNode("redis");
  const int replica_host = rt.AddNode("redis-replica");
  SimNetwork net(rt, Rng(2));
  SimRedis primary(rt, primary_host);
  SimRedis replica(rt, replica_host, primary.truth());
  SimSentinel sentinel(rt, primary, replica, Rng(3), Options());
  SimCoordinationClient client(rt, net, sentinel, node, SimClientOptions{1000, 0});
  Status during = Status::Ok();
  Status after = Status(StatusCode::kInternal, "not run");
  bool ran = false;
  Thread t = rt.SpawnOn(node, "client", [&] {
    ASSERT_TRUE(client.SetValue("before", "x").ok());
    rt.SleepFor(Millis(50));
    rt.At(rt.true_now(), [&] { ASSERT_TRUE(sentinel.Failover()); });
    rt.SleepFor(Millis(10));
    during = client.SetValue("during", "x");
    rt.SleepFor(Millis(3500));  // past the promotion
    after = client.SetValue("after", "x");
    Result<std::string> before = client.GetValue("before");
    EXPECT_TRUE(before.ok() && *before == "x") << "the replica received the write made 50 ms before the failover";
    election::testing::CheckCoordinationContract(client, [&](Duration d) { rt.SleepFor(d); });
    ran = true;
  });
  rt.RunUntil(INT64_MAX);
  t.Join();
  EXPECT_EQ(during.code(), StatusCode::kUnavailable) << "the dead primary refuses: " << during.ToString();
  EXPECT_TRUE(after.ok()) << "after the promotion the client must reach the replica: " << after.ToString();
  EXPECT_TRUE(replica.StateOf("after").value.has_value()) << "the write went to the promoted replica";
  EXPECT_TRUE(ran) << "the contract did not run to its end:\n" << rt.ThreadReport();
}

}  // namespace
}  // namespace kvchaos::sim
