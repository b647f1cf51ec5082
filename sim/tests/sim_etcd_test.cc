// SimEtcd with the production CoordinationEtcdBackend over SimEtcdTransport: the coordination
// contract (the one real etcd passes), calls that go on through the other members when one
// crashes, pauses or is cut off, leadership and leases across an election, and the ground truth
// the checkers read.
#include "sim/sim_etcd.h"

#include <gtest/gtest.h>

#include <memory>

#include "core/election/coordination_etcd_backend.h"
#include "core/election/tests/coordination_contract.h"
#include "sim/sim_etcd_transport.h"
#include "sim/sim_etcd_truth.h"
#include "sim/sim_network.h"

namespace kvchaos::sim {
namespace {

using namespace std::chrono_literals;

// A node and a 3-member cluster, each member on a host with a clock of its own.
struct EtcdWorld {
  explicit EtcdWorld(uint64_t seed = 1, SimEtcdOptions options = {}) {
    node = rt.AddNode("n1");
    for (int i = 0; i < 3; ++i) {
      hosts.push_back(rt.AddNode("etcd" + std::to_string(i + 1),
                                 SimClock(Duration(std::chrono::seconds(100 * (i + 1))), 50 * (i - 1))));
    }
    net = std::make_unique<SimNetwork>(rt, Rng(seed).Split("network"));
    etcd = std::make_unique<SimEtcd>(rt, hosts, Rng(seed).Split("etcd"), options);
    election::EtcdEndpoints endpoints;
    for (int i = 0; i < 3; ++i) endpoints.members.push_back({"etcd" + std::to_string(i + 1), 2379});
    endpoints.timeout_ms = 500;
    endpoints.retry_count = 2;
    backend = std::make_unique<election::CoordinationEtcdBackend>(
        rt, endpoints, std::make_unique<SimEtcdTransport>(rt, *net, *etcd, node));
    truth = std::make_unique<SimEtcdLockTruth>(rt, *etcd, backend->LockKey(""), backend->FenceKey(""));
  }
  // Runs `body` on the node's thread to its end; false when it did not finish.
  bool Run(const std::function<void()>& body) {
    bool done = false;
    Thread t = rt.SpawnOn(node, "test", [&] {
      body();
      done = true;
    });
    rt.RunUntil(INT64_MAX);
    t.Join();
    return done;
  }
  SimRuntime rt;
  int node = 0;
  std::vector<int> hosts;
  std::unique_ptr<SimNetwork> net;
  std::unique_ptr<SimEtcd> etcd;
  std::unique_ptr<election::CoordinationEtcdBackend> backend;
  std::unique_ptr<SimEtcdLockTruth> truth;
};

// The production backend keeps the contract on the model as on a real 3-member cluster (leases in
// whole seconds, 1 s at least with a short election timeout, revoked within half a second).
TEST(SimEtcdTest, ProductionBackendMeetsTheCoordinationContract) {
  SimEtcdOptions options;
  options.min_ttl_s = 1;
  EtcdWorld w(1, options);
  const bool done = w.Run([&] {
    ASSERT_TRUE(w.backend->Init().ok());
    election::testing::CheckCoordinationContract(*w.backend, [&](Duration d) { w.rt.SleepFor(d); },
                                                 election::testing::ContractTiming{1s, 3s});
  });
  EXPECT_TRUE(done) << "the contract did not run to its end:\n" << w.rt.ThreadReport();
  EXPECT_GT(w.etcd->revision(), 50) << "the contract's writes did not reach the model";
}

// Renews until it succeeds or `within` passes, a loop at a time, as the elector does.
Status RenewUntil(EtcdWorld& w, Duration within) {
  const MonoTime end = w.rt.Now() + within;
  Status s;
  while (w.rt.Now() < end) {
    s = w.backend->RenewLock("L", "n1", 10s, std::min(end, w.rt.Now() + 1s));
    if (s.ok()) return s;
    w.rt.SleepFor(100ms);
  }
  return s;
}

// A crashed member refuses and a paused one holds requests: the gateway moves on to the others,
// and the lock stays the holder's with its token. A follower's fault needs no election; the
// leader's does, after which the lease got a fresh TTL.
TEST(SimEtcdTest, CallsGoOnThroughTheOthersWhenAMemberCrashesOrPauses) {
  EtcdWorld w(7);
  const bool done = w.Run([&] {
    auto grant = w.backend->TryLock("L", "n1", 10s, election::kNoDeadline);
    ASSERT_TRUE(grant.ok()) << grant.status().ToString();
    const int leader = w.etcd->leader();
    const int follower = (leader + 1) % 3;
    w.etcd->Crash(follower);
    Status s = w.backend->RenewLock("L", "n1", 10s, election::kNoDeadline);
    EXPECT_TRUE(s.ok()) << "a renewal must go on through the two members left: " << s.ToString();
    w.etcd->Restart(follower);
    w.etcd->Pause(follower);
    s = w.backend->RenewLock("L", "n1", 10s, election::kNoDeadline);
    EXPECT_TRUE(s.ok()) << "a renewal must go on past a paused member: " << s.ToString();
    w.etcd->Resume(follower);
    EXPECT_EQ(w.etcd->leader(), leader) << "a follower's faults moved leadership";
    EXPECT_EQ(w.etcd->counters().elections, 1u);

    w.etcd->Crash(leader);
    EXPECT_EQ(w.etcd->leader(), -1) << "the leader crashed: none until the others elect one";
    s = RenewUntil(w, 8s);
    EXPECT_TRUE(s.ok()) << "renewals must get through once the two left elect a leader: " << s.ToString();
    EXPECT_GE(w.etcd->leader(), 0) << "the two left must have elected a leader";
    EXPECT_NE(w.etcd->leader(), leader);
    auto holder = w.backend->GetLockHolder("L", election::kNoDeadline);
    ASSERT_TRUE(holder.ok()) << holder.status().ToString();
    EXPECT_EQ(holder->holder, "n1");
    EXPECT_EQ(holder->token, grant->token) << "the holding kept its token through member faults";
    EXPECT_TRUE(w.truth->HeldWith("n1", grant->token)) << "the ground truth lost the holding";
    EXPECT_EQ(w.truth->truth().grants.size(), 1u) << "renewals are not grants";
  });
  EXPECT_TRUE(done) << w.rt.ThreadReport();
  EXPECT_EQ(w.etcd->counters().elections, 2u);
  EXPECT_GE(w.etcd->counters().refused, 1u) << "the crashed member must have refused a request";
}

// Two members down: no quorum, no renewal gets through, and the one left says it has no leader
// once it noticed; one member back: a leader again, and the lock (kept on disk) is still there.
TEST(SimEtcdTest, NoQuorumNoServiceThenBackWithTheData) {
  EtcdWorld w(3);
  const bool done = w.Run([&] {
    ASSERT_TRUE(w.backend->TryLock("L", "n1", 10s, election::kNoDeadline).ok());
    w.etcd->Crash(0);
    w.etcd->Crash(1);
    Status s = RenewUntil(w, 4s);
    EXPECT_FALSE(s.ok()) << "one member of three served a renewal";
    EXPECT_EQ(w.etcd->leader(), -1);
    w.etcd->Restart(0);
    s = RenewUntil(w, 6s);
    EXPECT_TRUE(s.ok()) << "two members must elect a leader and serve: " << s.ToString();
    EXPECT_EQ(w.backend->GetLockHolder("L", election::kNoDeadline)->holder, "n1") << "the lock was lost";
  });
  EXPECT_TRUE(done) << w.rt.ThreadReport();
  EXPECT_GE(w.etcd->counters().no_leader, 1u) << "a member without a quorum must say so";
}

// A lease that is not kept alive expires on the leader's clock and its lock is free again; the
// ground truth saw both grants, in token order, with lease ends.
TEST(SimEtcdTest, AnExpiredLeaseFreesTheLockForAHigherToken) {
  EtcdWorld w(5);
  const bool done = w.Run([&] {
    ASSERT_TRUE(w.backend->TryLock("L", "n1", 3s, election::kNoDeadline).ok());
    EXPECT_EQ(w.backend->TryLock("L", "n2", 3s, election::kNoDeadline).status().code(), StatusCode::kAlreadyExists);
    w.rt.SleepFor(4s);
    auto second = w.backend->TryLock("L", "n2", 3s, election::kNoDeadline);
    ASSERT_TRUE(second.ok()) << "the expired lock must be free: " << second.status().ToString();
    EXPECT_EQ(second->token, 2u);
    EXPECT_EQ(w.etcd->counters().leases_expired, 1u);
    EXPECT_FALSE(w.truth->HeldWith("n1", 1)) << "the expired holding is still held in the ground truth";
    EXPECT_TRUE(w.truth->HeldWith("n2", 2));
    EXPECT_EQ(w.truth->truth().token_regressions, 0u);
    EXPECT_EQ(w.truth->truth().lease_ends.size(), 2u) << "each holding has its lease end";
  });
  EXPECT_TRUE(done) << w.rt.ThreadReport();
}

// The same seed gives the same trace, and another seed another one (elections, latencies).
TEST(SimEtcdTest, TheTraceIsAFunctionOfTheSeed) {
  auto run = [](uint64_t seed) {
    EtcdWorld w(seed);
    w.Run([&] {
      (void)w.backend->TryLock("L", "n1", 5s, election::kNoDeadline);
      w.etcd->Crash(w.etcd->leader());
      (void)w.backend->RenewLock("L", "n1", 5s, w.rt.Now() + 5s);
    });
    return w.rt.trace().hash();
  };
  EXPECT_EQ(run(11), run(11));
  EXPECT_NE(run(11), run(12));
}

}  // namespace
}  // namespace kvchaos::sim
