// CoordinationRedisBackend in redis+sentinel:// mode against a real primary, replica and three
// sentinels on loopback (testing/redis_sentinel_cluster.h): the shared contract, following a
// failover to the promoted replica, and the fencing floor after a failover that lost the newest
// grants (asynchronous replication). Each test starts its own setup (about 2 s).
#include "core/election/coordination_redis_backend.h"

#include <gtest/gtest.h>

#include <thread>

#include "core/common/real_runtime.h"
#include "core/election/sentinel_resolver.h"
#include "core/election/tests/coordination_contract.h"
#include "testing/free_port.h"
#include "testing/redis_sentinel_cluster.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;
using kvchaos::testing::RedisSentinelCluster;

std::unique_ptr<CoordinationRedisBackend> Make(const std::string& uri) {
  auto parsed = ParseCoordinationUri(uri);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return nullptr;
  EXPECT_EQ(parsed->kind, CoordinationUri::Kind::kRedisSentinel);
  return std::make_unique<CoordinationRedisBackend>(Runtime::Real(), parsed->redis);
}

std::string Loopback(int port) { return "127.0.0.1:" + std::to_string(port); }

class SentinelBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = RedisSentinelCluster::Start();
    if (!cluster_) GTEST_SKIP() << RedisSentinelCluster::SkipReason();
  }
  std::unique_ptr<RedisSentinelCluster> cluster_;
};

TEST_F(SentinelBackendTest, CoordinationContractThroughTheSentinels) {
  auto b = Make(cluster_->Uri("?cluster_name=contract"));
  EXPECT_NE(b->Describe().find("primary=(not known yet)"), std::string::npos) << b->Describe();
  ASSERT_TRUE(b->Init().ok());
  EXPECT_EQ(b->CurrentServer(), Loopback(cluster_->server_port(0))) << "not connected to the primary";
  EXPECT_NE(b->Describe().find("primary=" + Loopback(cluster_->server_port(0))), std::string::npos) << b->Describe();
  testing::CheckCoordinationContract(*b, [](Duration d) { std::this_thread::sleep_for(d); });

  // A master name the sentinels do not monitor: refused at Init, naming it and each sentinel.
  std::string wrong_uri = cluster_->Uri("?retry_count=0");
  wrong_uri.replace(wrong_uri.find(RedisSentinelCluster::kMasterName), std::string(RedisSentinelCluster::kMasterName).size(),
                    "no-such-master");
  Status wrong = Make(wrong_uri)->Init();
  EXPECT_EQ(wrong.code(), StatusCode::kUnavailable) << wrong.ToString();
  EXPECT_NE(wrong.message().find("no master named 'no-such-master'"), std::string::npos) << wrong.message();
  EXPECT_NE(wrong.message().find(Loopback(cluster_->sentinel_port(2))), std::string::npos)
      << "every sentinel's answer must be named: " << wrong.message();
}

// The primary dies with a lock held (and replicated): while the sentinels still name it, calls
// fail at once naming it; once they promote the replica, the next calls go there, and the lock
// is still its holder's, with its token — never someone else's.
TEST_F(SentinelBackendTest, CallsFollowAFailoverToThePromotedReplica) {
  auto b = Make(cluster_->Uri("?cluster_name=f&timeout_ms=300&retry_count=2"));
  ASSERT_TRUE(b->Init().ok());
  auto grant = b->TryLock("L", "a", 30s, kNoDeadline);
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  ASSERT_TRUE(b->SetValue("k", "before").ok());
  ASSERT_TRUE(cluster_->WaitForReplication(5s)) << "the replica did not catch up";

  const auto killed = std::chrono::steady_clock::now();
  cluster_->KillServer(0);
  Status during = b->RenewLock("L", "a", 30s, kNoDeadline);
  EXPECT_EQ(during.code(), StatusCode::kUnavailable) << during.ToString();
  EXPECT_NE(during.message().find(Loopback(cluster_->server_port(0))), std::string::npos)
      << "the error must name the dead primary: " << during.message();

  ASSERT_TRUE(cluster_->WaitForPrimary(1, 15s)) << "the sentinels did not promote the replica";
  std::printf("failover: the sentinels named the replica %.1f s after the primary was killed\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count());
  auto holder = b->GetLockHolder("L", kNoDeadline);
  ASSERT_TRUE(holder.ok()) << "no call went to the new primary: " << holder.status().ToString();
  EXPECT_EQ(b->CurrentServer(), Loopback(cluster_->server_port(1)));
  EXPECT_NE(b->Describe().find("primary=" + Loopback(cluster_->server_port(1))), std::string::npos) << b->Describe();
  EXPECT_EQ(holder->holder, "a") << "a replicated lock must still be its holder's";
  EXPECT_EQ(holder->token, grant->token);
  EXPECT_TRUE(b->RenewLock("L", "a", 30s, kNoDeadline).ok());
  EXPECT_EQ(b->TryLock("L", "b", 30s, kNoDeadline).status().code(), StatusCode::kAlreadyExists)
      << "the lock went to someone else after the failover";
  EXPECT_EQ(*b->GetValue("k"), "before");
  auto next = b->TryLock("L2", "b", 30s, kNoDeadline);
  ASSERT_TRUE(next.ok()) << "scripts were not loaded on the new primary: " << next.status().ToString();
}

// The primary freezes (SIGSTOP: its sockets stay open) and the sentinels promote the replica: the
// next call times out on its connection to the frozen primary within timeout_ms, asks the
// sentinels again and succeeds on the new primary within the same call. When the old primary
// wakes up, calls stay on the new one.
TEST_F(SentinelBackendTest, AFrozenPrimaryIsLeftForThePromotedReplicaWithinOneCall) {
  auto b = Make(cluster_->Uri("?cluster_name=p&timeout_ms=300&retry_count=2"));
  ASSERT_TRUE(b->TryLock("L", "a", 30s, kNoDeadline).ok());
  ASSERT_TRUE(cluster_->WaitForReplication(5s)) << "the replica did not catch up";
  cluster_->PauseServer(0);
  ASSERT_TRUE(cluster_->WaitForPrimary(1, 15s)) << "the sentinels did not promote the replica";
  Status renewed = b->RenewLock("L", "a", 30s, kNoDeadline);
  EXPECT_TRUE(renewed.ok()) << "the call did not go on to the new primary: " << renewed.ToString();
  EXPECT_EQ(b->CurrentServer(), Loopback(cluster_->server_port(1)));
  cluster_->ResumeServer(0);
  EXPECT_EQ(b->GetLockHolder("L", kNoDeadline)->holder, "a");
  EXPECT_TRUE(b->SetValue("k", "after").ok());
  EXPECT_EQ(b->CurrentServer(), Loopback(cluster_->server_port(1))) << "calls went back to the old primary";
}

// Issue 19 §2: the replica stops replicating, the holder re-enters three times (tokens 2..4 on
// the primary only), the primary dies and the replica, promoted, has token 1: grants there repeat
// tokens already handed out. RaiseTokenFloor with the newest token the fence saw (4) puts the
// counter above it, so the new term fences every old one out.
TEST_F(SentinelBackendTest, TheTokenFloorStaysAboveTokensThePromotedReplicaLost) {
  auto b = Make(cluster_->Uri("?cluster_name=fence&timeout_ms=300&retry_count=2"));
  auto first = b->TryLock("L", "a", 30s, kNoDeadline);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->token, 1u);
  ASSERT_TRUE(cluster_->WaitForReplication(5s)) << "the replica did not catch up";
  cluster_->CutReplication();
  FencingToken newest = 0;
  for (int i = 0; i < 3; ++i) {
    auto again = b->TryLock("L", "a", 30s, kNoDeadline);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    newest = again->token;
  }
  ASSERT_EQ(newest, 4u);

  cluster_->KillServer(0);
  ASSERT_TRUE(cluster_->WaitForPrimary(1, 15s)) << "the sentinels did not promote the replica";
  auto holder = b->GetLockHolder("L", kNoDeadline);
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  EXPECT_EQ(b->CurrentServer(), Loopback(cluster_->server_port(1)));
  EXPECT_EQ(holder->token, 1u) << "the promoted replica was expected to lack grants 2..4";
  auto repeated = b->TryLock("L", "a", 30s, kNoDeadline);
  ASSERT_TRUE(repeated.ok()) << repeated.status().ToString();
  EXPECT_LE(repeated->token, newest) << "without the floor, the new primary hands out a token already used";

  auto raised = b->RaiseTokenFloor("L", "a", newest, kNoDeadline);
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_GT(*raised, newest) << "the floor must put the token above every one handed out before the failover";
  EXPECT_EQ(b->GetLockHolder("L", kNoDeadline)->token, *raised);
  ASSERT_TRUE(b->Unlock("L", "a", kNoDeadline).ok());
  auto later = b->TryLock("L", "b", 30s, kNoDeadline);
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  EXPECT_GT(later->token, *raised) << "grants after the raise must stay above it";
}

// No sentinel listens: the answer names each one, and comes within the timeouts.
TEST(SentinelResolverTest, NoSentinelAnswersIsUnavailableNamingEach) {
  const int p1 = kvchaos::testing::PickFreeLoopbackPort();
  const int p2 = kvchaos::testing::PickFreeLoopbackPort();
  SentinelResolver resolver(Runtime::Real(), {{"127.0.0.1", p1}, {"127.0.0.1", p2}}, "M", 200);
  auto r = resolver.Resolve(kNoDeadline);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_NE(r.status().message().find(Loopback(p1)), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(Loopback(p2)), std::string::npos) << r.status().message();
  auto late = resolver.Resolve(Runtime::Real().Now() - 1ms);
  EXPECT_EQ(late.status().code(), StatusCode::kTimeout) << late.status().ToString();

  auto uri = ParseCoordinationUri("redis+sentinel://127.0.0.1:" + std::to_string(p1) + "/M?retry_count=0");
  ASSERT_TRUE(uri.ok()) << uri.status().ToString();
  CoordinationRedisBackend b(Runtime::Real(), uri->redis);
  Status s = b.Init();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("no sentinel"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kvchaos::election
