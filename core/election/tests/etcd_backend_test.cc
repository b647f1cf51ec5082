// CoordinationEtcdBackend against real etcd clusters on loopback (testing/etcd_cluster.h): the
// shared contract on 3 members, the keys it writes, calls that go on through the other members
// when one is killed, paused or without a leader, lock calls that end by their deadline, and two
// LeaderElectors handing over through it. Each test starts its own cluster (ctest runs every test
// in a process of its own); a 3-member start takes well under a second on loopback.
#include "core/election/coordination_etcd_backend.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <thread>

#include "core/common/base64.h"
#include "core/common/real_runtime.h"
#include "core/election/leader_elector.h"
#include "core/election/tests/coordination_contract.h"
#include "core/election/tests/elector_fixture.h"
#include "testing/etcd_cluster.h"
#include "testing/free_port.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;
using kvchaos::testing::EtcdCluster;

// etcd leases count whole seconds (1 s at least with the test cluster's timing) and expired ones
// are revoked within about half a second: the expiry check waits three times the lease.
const testing::ContractTiming kEtcdTiming{1s, 3s};

std::unique_ptr<CoordinationEtcdBackend> Make(const std::string& uri) {
  auto parsed = ParseCoordinationUri(uri);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return nullptr;
  return std::make_unique<CoordinationEtcdBackend>(Runtime::Real(), parsed->etcd);
}

// What etcd holds under `key` (its value and lease), read past the backend.
struct RawRecord {
  bool found = false;
  std::string value;
  std::string lease;
};
RawRecord RawGet(const std::string& endpoint, const std::string& key) {
  const size_t colon = endpoint.rfind(':');
  httplib::Client client(endpoint.substr(0, colon), std::stoi(endpoint.substr(colon + 1)));
  auto res = client.Post("/v3/kv/range", "{\"key\":\"" + Base64Encode(key) + "\"}", "application/json");
  RawRecord out;
  if (!res) return out;
  auto answer = nlohmann::json::parse(res->body, nullptr, false);
  if (!answer.is_object() || !answer.contains("kvs")) return out;
  const auto& kv = answer["kvs"][0];
  out.found = true;
  out.value = Base64Decode(kv.value("value", "")).value_or("<not base64>");
  out.lease = kv.value("lease", "");
  return out;
}

class EtcdBackendTest : public ::testing::Test {
 protected:
  void Start(int members) {
    etcd_ = EtcdCluster::Start(members);
    if (!etcd_) GTEST_SKIP() << EtcdCluster::SkipReason();
  }
  std::unique_ptr<EtcdCluster> etcd_;
};

TEST_F(EtcdBackendTest, CoordinationContractOnThreeMembers) {
  Start(3);
  auto b = Make(etcd_->Uri("?prefix=contract/"));
  ASSERT_TRUE(b->Init().ok());
  testing::CheckCoordinationContract(*b, [](Duration d) { std::this_thread::sleep_for(d); }, kEtcdTiming);
}

// The keys under the prefix: the lock holds the holder on a lease, the counter the token (no
// lease, so it outlives the lock), values under kv/. A renewal asking for a longer lease than the
// grant moves the lock to a lease that long.
TEST_F(EtcdBackendTest, KeysLeasesAndALongerRenewal) {
  Start(3);
  auto b = Make(etcd_->Uri("?prefix=app1/"));
  ASSERT_TRUE(b->TryLock(kLeaderLockKey, "node-1", 2s, kNoDeadline).ok());
  const RawRecord lock = RawGet(etcd_->Endpoint(1), "app1/lock/" + std::string(kLeaderLockKey));
  ASSERT_TRUE(lock.found) << "no lock key under the prefix";
  EXPECT_EQ(lock.value, "node-1");
  EXPECT_NE(lock.lease, "") << "the lock must be attached to a lease";
  EXPECT_EQ(RawGet(etcd_->Endpoint(2), "app1/fence/" + std::string(kLeaderLockKey)).value, "1");
  EXPECT_EQ(RawGet(etcd_->Endpoint(2), "app1/fence/" + std::string(kLeaderLockKey)).lease, "")
      << "the fencing counter must not expire";

  ASSERT_TRUE(b->RenewLock(kLeaderLockKey, "node-1", 30s, kNoDeadline).ok());
  auto holder = b->GetLockHolder(kLeaderLockKey, kNoDeadline);
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  EXPECT_EQ(holder->holder, "node-1");
  EXPECT_GT(holder->remaining_ttl, 20s) << "a renewal asking for 30 s kept the 2 s lease";
  EXPECT_EQ(holder->token, 1u) << "a renewal keeps the token";
  std::this_thread::sleep_for(3500ms);
  EXPECT_EQ(b->GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "node-1") << "the old 2 s lease still ended the lock";

  ASSERT_TRUE(b->SetValue("n1", "v").ok());
  EXPECT_EQ(RawGet(etcd_->Endpoint(0), "app1/kv/n1").value, "v");
  auto other = Make(etcd_->Uri("?prefix=app2/"));
  EXPECT_EQ(other->GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "") << "prefixes must not share locks";
  EXPECT_TRUE(other->ListValues("")->empty()) << "prefixes must not share values";
}

// Member 0, the one requests go to first, is killed (when it led, the others elect a new leader
// meanwhile), then it is back and the member answering now is paused: every call goes on through
// the others, and the failover sticks to a member that answers.
TEST_F(EtcdBackendTest, CallsGoOnThroughTheOthersWhenAMemberIsKilledOrPaused) {
  Start(3);
  // 2 s per attempt and 10 retries: time for the others to elect a leader when the killed member
  // led, even on a loaded machine (the test cluster's election timeout is 500 ms; with the default
  // 3 retries, refused and leaderless answers used them up within 3 s on a busy CI machine).
  auto b = Make(etcd_->Uri("?prefix=f/&timeout_ms=2000&retry_count=10"));
  ASSERT_TRUE(b->Init().ok());
  auto first = b->TryLock("L", "a", 30s, kNoDeadline);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(b->SetValue("k", "before").ok());
  EXPECT_EQ(b->PreferredMember(), etcd_->Endpoint(0));

  etcd_->Kill(0);
  Status renewed_after_kill = b->RenewLock("L", "a", 30s, kNoDeadline);
  EXPECT_TRUE(renewed_after_kill.ok()) << "renew did not go to another member: " << renewed_after_kill.ToString();
  EXPECT_NE(b->PreferredMember(), etcd_->Endpoint(0)) << "requests still go to the dead member first";
  auto holder = b->GetLockHolder("L", kNoDeadline);
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  EXPECT_EQ(holder->holder, "a");
  EXPECT_EQ(holder->token, first->token);
  EXPECT_EQ(*b->GetValue("k"), "before") << "a value written before the kill was lost";
  EXPECT_EQ(b->TryLock("L", "b", 30s, kNoDeadline).status().code(), StatusCode::kAlreadyExists);
  auto second = b->TryLock("L2", "b", 30s, kNoDeadline);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(b->Unlock("L2", "b", kNoDeadline).ok());
  EXPECT_TRUE(b->SetValueWithTtl("hb/a", "1", 30s).ok());
  EXPECT_EQ(b->ListValues("hb/")->size(), 1u);

  // Member 0 back; pause the member answering now (its sockets stay open): requests time out
  // there and go on to the other two, which keep (or elect) a leader.
  etcd_->Restart(0);
  const int paused = b->PreferredMember() == etcd_->Endpoint(1) ? 1 : 2;
  etcd_->Pause(paused);
  Status renewed = b->RenewLock("L", "a", 30s, kNoDeadline);
  EXPECT_TRUE(renewed.ok()) << "renew did not get past the paused member: " << renewed.ToString();
  EXPECT_NE(b->PreferredMember(), etcd_->Endpoint(paused));
  auto value = b->GetValue("k");
  EXPECT_TRUE(value.ok() && *value == "before") << value.status().ToString();
  etcd_->Resume(paused);
  EXPECT_TRUE(b->Unlock("L", "a", kNoDeadline).ok());
}

// A member cut off from its quorum (its two peers killed) answers "no leader" at once, because
// every request asks for a leader (the gateway's hasleader metadata); the request then goes to
// the next member of the URI, here the one member of another cluster.
TEST_F(EtcdBackendTest, AMemberWithoutALeaderIsPassedOver) {
  Start(3);
  auto healthy = EtcdCluster::Start(1);
  ASSERT_NE(healthy, nullptr);
  etcd_->Kill(1);
  etcd_->Kill(2);
  ASSERT_TRUE(etcd_->WaitUntilLeaderless(0, 10s)) << "member 0 still has a leader";

  // Alone, it is asked again for timeout_ms (an election may end meanwhile), then given up on.
  auto alone = Make("etcd://" + etcd_->Endpoint(0) + "/?timeout_ms=500&retry_count=0");
  Status s = alone->SetValue("k", "v");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("no leader"), std::string::npos) << "the member did not say it has no leader: " << s.message();
  EXPECT_NE(s.message().find(etcd_->Endpoint(0)), std::string::npos) << "the message must name the member";

  auto b = Make("etcd://" + etcd_->Endpoint(0) + "," + healthy->Endpoint(0) + "/?timeout_ms=60000");
  ASSERT_TRUE(b->Init().ok());
  EXPECT_EQ(b->PreferredMember(), healthy->Endpoint(0));
  auto g = b->TryLock("L", "a", 30s, Runtime::Real().Now() + 10s);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->token, 1u);
}

// A frozen member and a URI allowing 5 s per attempt and 3 retries: a lock call with a 200 ms
// deadline gives up with kTimeout on its first attempt. A call whose deadline has passed sends
// nothing.
TEST_F(EtcdBackendTest, ALockCallEndsByItsDeadlineWhateverTheUriTimeout) {
  Start(1);
  auto b = Make(etcd_->Uri("?timeout_ms=5000&retry_count=3"));
  ASSERT_TRUE(b->TryLock("L", "a", 30s, kNoDeadline).ok());
  Runtime& rt = Runtime::Real();
  etcd_->Pause(0);
  const MonoTime start = rt.Now();
  Status s = b->RenewLock("L", "a", 30s, start + 200ms);
  const Duration took = rt.Now() - start;
  etcd_->Resume(0);
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_NE(s.message().find("gave up at the caller's deadline after 1 attempt(s)"), std::string::npos) << s.message();
  EXPECT_LT(took, 5s) << "the call waited for the URI's timeout, not its deadline";
  Status late = b->RenewLock("L", "a", 30s, rt.Now() - 1ms);
  EXPECT_EQ(late.code(), StatusCode::kTimeout) << late.ToString();
  EXPECT_NE(late.message().find("deadline passed before the first attempt"), std::string::npos) << late.message();
  EXPECT_TRUE(b->RenewLock("L", "a", 30s, rt.Now() + 5s).ok()) << "did not recover after the pause";
}

// Nothing listens on either member and the URI asks for 100 retries: they go on only while the
// deadline leaves time for them, and the error keeps what the members said.
TEST(EtcdBackendDeadlineTest, RetriesStopAtTheDeadline) {
  const std::string uri = "etcd://127.0.0.1:" + std::to_string(kvchaos::testing::PickFreeLoopbackPort()) +
                          ",127.0.0.1:" + std::to_string(kvchaos::testing::PickFreeLoopbackPort()) +
                          "/?timeout_ms=1000&retry_count=100";
  auto b = Make(uri);
  Runtime& rt = Runtime::Real();
  const MonoTime start = rt.Now();
  Result<LockGrant> g = b->TryLock("L", "a", 10s, start + 300ms);
  const Duration took = rt.Now() - start;
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kTimeout) << g.status().ToString();
  EXPECT_NE(g.status().message().find("gave up at the caller's deadline"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("cannot connect"), std::string::npos) << "the last error must be kept";
  EXPECT_LT(took, 5s) << "retried past the deadline";
  Status init = Make("etcd://127.0.0.1:" + std::to_string(kvchaos::testing::PickFreeLoopbackPort()) +
                     "/?retry_count=0")
                    ->Init();
  EXPECT_EQ(init.code(), StatusCode::kUnavailable) << init.ToString();
}

// Two backends (two processes' worth) take and release one lock as fast as they can: a grant read
// the counter, and a transaction that did not compare it could write the same token again after
// the other's Unlock. Every granted token must be new, and they must only go up.
TEST_F(EtcdBackendTest, ConcurrentGrantsNeverShareAToken) {
  Start(3);
  auto b1 = Make(etcd_->Uri("?prefix=race/"));
  auto b2 = Make(etcd_->Uri("?prefix=race/"));
  std::vector<FencingToken> tokens[2];
  auto run = [&](CoordinationEtcdBackend& b, const std::string& holder, std::vector<FencingToken>& out) {
    for (int i = 0; i < 40; ++i) {
      auto g = b.TryLock("R", holder, 30s, kNoDeadline);
      if (!g.ok()) continue;  // held by the other one
      out.push_back(g->token);
      (void)b.Unlock("R", holder, kNoDeadline);
    }
  };
  std::thread t1([&] { run(*b1, "h1", tokens[0]); });
  std::thread t2([&] { run(*b2, "h2", tokens[1]); });
  t1.join();
  t2.join();
  std::vector<FencingToken> all = tokens[0];
  all.insert(all.end(), tokens[1].begin(), tokens[1].end());
  ASSERT_FALSE(all.empty());
  for (const auto& own : tokens) EXPECT_TRUE(std::is_sorted(own.begin(), own.end())) << "a holder's tokens went down";
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a token was granted twice";
}

TEST(EtcdBackendLeaseTest, LeasesAreWholeSecondsRoundedUp) {
  EXPECT_EQ(CoordinationEtcdBackend::LeaseSeconds(1ns), 1);
  EXPECT_EQ(CoordinationEtcdBackend::LeaseSeconds(200ms), 1);
  EXPECT_EQ(CoordinationEtcdBackend::LeaseSeconds(1s), 1);
  EXPECT_EQ(CoordinationEtcdBackend::LeaseSeconds(1001ms), 2) << "a lease must never be shorter than asked";
  EXPECT_EQ(CoordinationEtcdBackend::LeaseSeconds(10s), 10);
}

TEST_F(EtcdBackendTest, TwoElectorsHandOver) {
  Start(3);
  auto ba = Make(etcd_->Uri("?prefix=e/&timeout_ms=500"));
  auto bb = Make(etcd_->Uri("?prefix=e/&timeout_ms=500"));
  testing::CallbackLog la, lb;
  LeaderElectorOptions oa = testing::TestOptions("a"), ob = testing::TestOptions("b");
  oa.lease_ms = ob.lease_ms = 3000;
  oa.loop_interval_ms = ob.loop_interval_ms = 50;
  LeaderElector a(Runtime::Real(), *ba, oa, la.Callbacks());
  LeaderElector b(Runtime::Real(), *bb, ob, lb.Callbacks());
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(testing::WaitFor([&] { return a.IsLeader(); }));
  ASSERT_TRUE(b.Start().ok());
  ASSERT_TRUE(testing::WaitFor([&] { return b.Snapshot().observed_leader_id == "a"; }));
  EXPECT_FALSE(b.IsLeader());
  a.Stop();
  ASSERT_TRUE(testing::WaitFor([&] { return b.IsLeader(); })) << "b did not take over";
  EXPECT_GT(b.CurrentToken(), la.promotions.at(0)) << "the new term's token must fence the old one out";
  b.Stop();
}

}  // namespace
}  // namespace kvchaos::election
