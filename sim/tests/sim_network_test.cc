// SimNetwork and SimCoordinationClient: latency within the link's bounds, partitions and loss
// drop messages, duplication delivers twice, and the client sees a timeout when the reply is
// lost even though the backend applied the request ("applied but the reply was lost").
#include "core/election/tests/coordination_contract.h"
#include "sim/sim_network.h"

#include <gtest/gtest.h>

#include "sim/sim_coordination_client.h"
#include "sim/sim_redis.h"

namespace kvchaos::sim {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr TraceTag kTag("m");

TEST(SimNetworkTest, LatencyPartitionLossAndDuplication) {
  SimRuntime rt;
  rt.AddNode("n1");
  rt.AddNode("redis");
  SimNetwork net(rt, Rng(3));
  LinkParams& link = net.link(0, 1);
  link.tail_probability = 0;
  std::vector<int64_t> arrivals;
  for (int i = 0; i < 50; ++i) net.Send(0, 1, kTag, [&] { arrivals.push_back(rt.true_now()); });
  rt.RunUntil(INT64_MAX);
  ASSERT_EQ(arrivals.size(), 50u);
  for (int64_t t : arrivals) {
    EXPECT_GE(t, link.base_ns);
    EXPECT_LE(t, link.base_ns + link.jitter_ns);
  }
  int delivered = 0;
  link.partitioned = true;
  net.Send(0, 1, kTag, [&] { ++delivered; });
  link.partitioned = false;
  link.loss = 1.0;
  net.Send(0, 1, kTag, [&] { ++delivered; });
  link.loss = 0;
  link.duplicate = 1.0;
  net.Send(0, 1, kTag, [&] { ++delivered; });
  rt.RunUntil(INT64_MAX);
  EXPECT_EQ(delivered, 2) << "partitioned and lost messages vanish, a duplicated one arrives twice";
  EXPECT_EQ(net.counters().dropped, 2u);
  EXPECT_EQ(net.counters().duplicated, 1u);
}

// The simulator's Redis keeps the production scripts' rules: the same contract as memory, file and
// a real redis-server (core/election/tests/coordination_contract.h), through the client the
// simulated nodes use.
TEST(SimCoordinationClientTest, MeetsTheCoordinationContract) {
  SimRuntime rt;
  const int node = rt.AddNode("n1");
  const int backend = rt.AddNode("redis");
  SimNetwork net(rt, Rng(1));
  SimRedis redis(rt, backend);
  SimCoordinationClient client(rt, net, redis, node, SimClientOptions{1000, 2});
  bool ran = false;
  Thread t = rt.SpawnOn(node, "contract", [&] {
    election::testing::CheckCoordinationContract(client, [&](Duration d) { rt.SleepFor(d); });
    ran = true;
  });
  rt.RunUntil(INT64_MAX);
  t.Join();
  EXPECT_TRUE(ran) << "the contract did not run to its end:\n" << rt.ThreadReport();
}

TEST(SimCoordinationClientTest, ReplyLostMeansTimeoutButApplied) {
  SimRuntime rt;
  const int node = rt.AddNode("n1");
  const int backend = rt.AddNode("redis");
  SimNetwork net(rt, Rng(1));
  SimRedis redis(rt, backend);
  SimCoordinationClient client(rt, net, redis, node, SimClientOptions{200, 0});
  net.link(backend, node).partitioned = true;
  Status try_lock;
  TrueNs returned_at = 0;
  Thread t = rt.SpawnOn(node, "caller", [&] {
    Result<election::LockGrant> grant = client.TryLock("L", "n1", std::chrono::seconds(10), election::kNoDeadline);
    try_lock = grant.status();
    returned_at = rt.true_now();
  });
  rt.RunUntil(INT64_MAX);
  EXPECT_EQ(try_lock.code(), StatusCode::kTimeout) << try_lock.ToString();
  EXPECT_EQ(returned_at, 200 * kMs) << "the caller waits exactly its timeout";
  EXPECT_EQ(redis.grants().size(), 1u) << "the backend applied the TryLock although its reply was lost";
}

TEST(SimCoordinationClientTest, DownBackendRefusesAndRetriesAreBounded) {
  SimRuntime rt;
  const int node = rt.AddNode("n1");
  const int backend = rt.AddNode("redis");
  SimNetwork net(rt, Rng(1));
  SimRedis redis(rt, backend);
  SimCoordinationClient client(rt, net, redis, node, SimClientOptions{500, 2});
  redis.Crash();
  Status s;
  TrueNs returned_at = -1;
  Thread t = rt.SpawnOn(node, "caller", [&] {
    s = client.SetValue("k", "v");
    returned_at = rt.true_now();
  });
  rt.RunUntil(INT64_MAX);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_LT(returned_at, 50 * kMs) << "a refused connection must not wait for the timeout";
  EXPECT_EQ(net.counters().sent, 6u) << "one request and one refusal per attempt, three attempts";
}

}  // namespace
}  // namespace kvchaos::sim
