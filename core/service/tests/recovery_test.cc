// Promotion recovery: a recovery that fails is retried within the same term (same fencing token)
// and the data plane opens only once it succeeded; one that keeps failing for a lease makes the
// node demote itself, and it leads again (a new term) once the indexer is back (on virtual time).
// Fencing floor: when the coordination backend lost its data (memory backend wiped, a real
// redis-server restarted empty) after the meta index saw token T, the next term leads with a
// token above T and the index refuses T at once, before the new leader writes anything.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/election/coordination_memory_backend.h"
#include "core/election/tests/manual_runtime.h"
#include "core/service/meta_node.h"
#include "core/service/node_api.h"
#include "core/service/node_server.h"
#include "core/service/tests/flaky_indexer.h"
#include "core/service/tests/node_test_util.h"
#include "sim/virtual_time.h"
#include "testing/redis_server.h"

namespace kvchaos::service {
namespace {

using election::testing::WaitFor;
using nlohmann::json;

using testing::Post;
using testing::Reply;

const char* kStorage = R"({"storage": {"type": "posix", "global_unique_name": "nfs"}})";

// The node's core (MetaNode and its request handling, without sockets) on virtual time over a
// memory backend: the retry backoff and the self-demotion after a lease take no real time.
class RecoveryTest : public ::testing::Test {
 protected:
  // Runs `body` with a started node whose indexer fails its first `failures_` ListKeys calls.
  void WithNode(int64_t lease_ms, const std::function<void()>& body) {
    sim::SimRuntime runtime(sim::UnitTestOptions());
    runtime_ = &runtime;
    const std::string unfinished = sim::RunOnVirtualTime(runtime, [&] {
      auto owned = std::make_unique<testing::FlakyIndexer>();
      indexer_ = owned.get();
      indexer_->FailListKeys(failures_);
      NodeConfig c = testing::FastNodeConfig("solo");
      c.lease_ms = lease_ms;
      MetaNodeParts parts;
      parts.indexer = std::move(owned);
      parts.backend = std::make_unique<election::CoordinationMemoryBackend>(runtime);
      MetaNode node(runtime, c, 7, std::move(parts));
      NodeApi api(node);
      node_ = &node;
      api_ = &api;
      ASSERT_TRUE(node.Start(/*meta_http_port=*/1, /*admin_http_port=*/2).ok());
      body();
      node.Stop();
    });
    EXPECT_EQ(unfinished, "");
  }
  Reply Call(ApiPort port, const std::string& call, const std::string& body) {
    ApiAnswer answer = api_->Handle(port, call, body);
    return Reply{answer.http_status, json::parse(answer.body)};
  }
  json Manager() { return Call(ApiPort::kAdmin, "GetManagerClusterInfo", "{}").body; }
  bool Within(std::chrono::seconds limit, const std::function<bool()>& cond) {
    return sim::WaitUntilHolds(*runtime_, cond, limit);
  }

  int failures_ = 0;
  sim::SimRuntime* runtime_ = nullptr;
  testing::FlakyIndexer* indexer_ = nullptr;
  MetaNode* node_ = nullptr;
  NodeApi* api_ = nullptr;
};

TEST_F(RecoveryTest, AFailedRecoveryIsRetriedWithinTheTermAndTheDataPlaneOpensAfter) {
  failures_ = 3;
  WithNode(/*lease_ms=*/5000, [&] {
    ASSERT_TRUE(node_->elector().WaitForState(election::ElectorState::kLeader, runtime_->Now() + std::chrono::seconds(10)))
        << "the node must become leader once recovery succeeds";
    EXPECT_EQ(indexer_->failed_list_calls(), 3) << "every failed attempt must have been retried";
    json m = Manager();
    EXPECT_EQ(m["fencing_token"], 1) << "recovery was retried within the first term, not a new one: " << m.dump();
    Reply add = Call(ApiPort::kMeta, "AddStorage", kStorage);
    EXPECT_EQ(add.status, 200) << "the data plane must be open after recovery: " << add.body.dump();
  });
}

TEST_F(RecoveryTest, TheDataPlaneStaysClosedWhileRecoveringAndTheNodeDemotesItselfAfterALease) {
  failures_ = -1;
  WithNode(/*lease_ms=*/1200, [&] {
    ASSERT_TRUE(Within(std::chrono::seconds(10), [&] { return indexer_->failed_list_calls() >= 2; }))
        << "recovery was not retried";
    Reply write = Call(ApiPort::kMeta, "StartWriteCache", R"({"keys": ["k"]})");
    EXPECT_EQ(write.status, 421) << "no data-plane call before recovery succeeds: " << write.body.dump();
    EXPECT_NE(write.body.value("message", "").find("has not recovered yet"), std::string::npos) << write.body.dump();
    Reply health = Call(ApiPort::kAdmin, "CheckHealth", "{}");
    EXPECT_EQ(health.status, 503) << health.body.dump();
    EXPECT_NE(health.body.value("problems", "").find("recovering"), std::string::npos) << health.body.dump();

    // Recovery keeps failing: within about a lease the node gives the lock up instead of holding it.
    const MonoTime failing_since = runtime_->Now();
    ASSERT_TRUE(Within(std::chrono::seconds(10), [&] { return Manager().value("leader_id", "x").empty(); }))
        << "the node kept the lock although it could not recover: " << Manager().dump();
    EXPECT_LE(runtime_->Now() - failing_since, 2 * Millis(1200)) << "the self-demotion must come within about a lease";
    EXPECT_NE(Manager()["state"], "LEADER");

    // The indexer is back: after its no-campaign pause the node leads again, in a new term.
    indexer_->FailListKeys(0);
    ASSERT_TRUE(Within(std::chrono::seconds(10), [&] { return Manager().value("is_leader", false); })) << Manager().dump();
    EXPECT_GT(Manager()["fencing_token"].get<uint64_t>(), 1u) << "a new term after the self-demotion";
    Reply add = Call(ApiPort::kMeta, "AddStorage", kStorage);
    EXPECT_EQ(add.status, 200) << add.body.dump();
  });
}

// --- Fencing floor ---------------------------------------------------------------------------

class FencingFloorTest : public ::testing::Test {
 protected:
  // A node on `uri` (empty: a memory backend the test keeps a handle on to wipe it).
  void Start(const std::string& uri = "") {
    auto owned = std::make_unique<testing::FlakyIndexer>();
    indexer_ = owned.get();
    if (seed_token_ > 0) {
      std::vector<meta::MetaWrite> w{{"seed", {{"from", "an earlier cluster"}}}};
      ASSERT_TRUE(indexer_->Put(seed_token_, w).ok());
    }
    indexer_->FailRaiseFence(fence_failures_);
    MetaNodeParts parts;
    parts.indexer = std::move(owned);
    if (uri.empty()) {
      auto backend = std::make_unique<election::CoordinationMemoryBackend>(Runtime::Real());
      memory_ = backend.get();
      parts.backend = std::move(backend);
    }
    node_ = std::make_unique<NodeServer>(Runtime::Real(), testing::FastNodeConfig("solo", uri), 7, std::move(parts));
    ASSERT_TRUE(node_->Start().ok());
  }
  json Manager() { return Post(node_->admin_http_port(), "GetManagerClusterInfo", "{}").body; }
  uint64_t LeadingToken() {
    json m = Manager();
    return m.value("is_leader", false) ? m.value("fencing_token", uint64_t{0}) : 0;
  }
  // A write of a zombie of the term that had `token`.
  Status ZombieWrite(uint64_t token) {
    std::vector<meta::MetaWrite> w{{"cache:zombie", {{"from", "token " + std::to_string(token)}}}};
    return indexer_->Put(token, w);
  }

  uint64_t seed_token_ = 0;
  int fence_failures_ = 0;
  testing::FlakyIndexer* indexer_ = nullptr;
  election::CoordinationMemoryBackend* memory_ = nullptr;
  std::unique_ptr<NodeServer> node_;
};

TEST_F(FencingFloorTest, AGrantBelowTheIndexesNewestTokenIsRaisedAboveIt) {
  seed_token_ = 5;  // the index outlived a coordination backend whose counter had reached 5
  Start();
  ASSERT_TRUE(testing::WaitLeader(*node_)) << Manager().dump();
  EXPECT_EQ(LeadingToken(), 6u) << "the first grant (1) is below the index's newest (5): " << Manager().dump();
  EXPECT_EQ(*indexer_->NewestFencingToken(), 6u) << "the index's fence must be raised before serving";
  Status zombie = ZombieWrite(5);
  EXPECT_EQ(zombie.code(), StatusCode::kStaleFencingToken) << "the old term wrote: " << zombie.ToString();
  Reply add = Post(node_->meta_http_port(), "AddStorage", kStorage);
  EXPECT_EQ(add.status, 200) << "the new leader's writes must be accepted: " << add.body.dump();
}

TEST_F(FencingFloorTest, AfterAWipeTheNextTermFencesOutTheTermWithTheSameToken) {
  Start();
  ASSERT_TRUE(testing::WaitLeader(*node_));
  ASSERT_EQ(LeadingToken(), 1u);
  ASSERT_EQ(Post(node_->meta_http_port(), "AddStorage", kStorage).status, 200);
  ASSERT_EQ(*indexer_->NewestFencingToken(), 1u);

  memory_->Wipe();  // the coordination service lost everything: its next grant is token 1 again
  // The node loses its lock at the next renewal and wins a new term; that term must not fence
  // with token 1, or a resumed zombie of the first term would be accepted beside it.
  ASSERT_TRUE(WaitFor([&] { return LeadingToken() > 1; }, std::chrono::seconds(10)))
      << "no new term above token 1 after the wipe: " << Manager().dump();
  EXPECT_EQ(LeadingToken(), 2u) << "grant 1 raised past the index's newest (1)";
  Status zombie = ZombieWrite(1);
  EXPECT_EQ(zombie.code(), StatusCode::kStaleFencingToken)
      << "a write of the first term must be refused, before the new leader wrote anything: " << zombie.ToString();
  Reply add = Post(node_->meta_http_port(), "StartWriteCache", R"({"keys": ["k"], "storage": "nfs"})");
  EXPECT_EQ(add.status, 200) << "the new leader must be able to write: " << add.body.dump();
}

TEST_F(FencingFloorTest, AFailedFenceRaiseIsARecoveryFailureRetriedInTheTerm) {
  fence_failures_ = 2;
  Start();
  ASSERT_TRUE(testing::WaitLeader(*node_)) << Manager().dump();
  EXPECT_EQ(indexer_->raise_fence_calls(), 3) << "each failed fence raise must be retried";
  EXPECT_EQ(LeadingToken(), 1u) << "retried within the first term";
  EXPECT_EQ(*indexer_->NewestFencingToken(), 1u);
}

TEST_F(FencingFloorTest, ALeaderWhoseOwnTokenIsRefusedStepsDownAndTheNextTermFencesAbove) {
  Start();
  ASSERT_TRUE(testing::WaitLeader(*node_));
  ASSERT_EQ(LeadingToken(), 1u);
  // A term of the lost counter's era that was still promoting raises the fence late, above us.
  ASSERT_TRUE(indexer_->RaiseFence(5).ok());
  Reply refused = Post(node_->meta_http_port(), "AddStorage", kStorage);
  EXPECT_NE(refused.status, 200) << refused.body.dump();
  EXPECT_EQ(refused.body.value("code", ""), "StaleFencingToken") << refused.body.dump();
  // The term that can never write again steps down; the next one fences above the index (6).
  ASSERT_TRUE(WaitFor([&] { return LeadingToken() > 5; }, std::chrono::seconds(10)))
      << "the leader kept a token the index refuses: " << Manager().dump();
  EXPECT_EQ(LeadingToken(), 6u);
  Reply add = Post(node_->meta_http_port(), "AddStorage", kStorage);
  EXPECT_EQ(add.status, 200) << "the new term must be able to write: " << add.body.dump();
}

TEST_F(FencingFloorTest, ARedisRestartedEmptyDoesNotLetTheOldTokenBackIn) {
  auto redis = kvchaos::testing::RedisServer::Start();
  if (!redis) GTEST_SKIP() << kvchaos::testing::RedisServer::SkipReason();
  Start(redis->uri() + "/?timeout_ms=200&retry_count=1");
  ASSERT_TRUE(testing::WaitLeader(*node_));
  ASSERT_EQ(LeadingToken(), 1u);
  ASSERT_EQ(Post(node_->meta_http_port(), "AddStorage", kStorage).status, 200);

  redis->Restart();  // no persistence: the lock and the fencing counter are gone
  ASSERT_TRUE(WaitFor([&] { return LeadingToken() > 1; }, std::chrono::seconds(15)))
      << "no new term above token 1 after Redis came back empty: " << Manager().dump();
  EXPECT_EQ(LeadingToken(), 2u);
  EXPECT_EQ(ZombieWrite(1).code(), StatusCode::kStaleFencingToken) << "the first term's token was accepted again";
  Reply write = Post(node_->meta_http_port(), "StartWriteCache", R"({"keys": ["k"], "storage": "nfs"})");
  EXPECT_EQ(write.status, 200) << "the new leader must be able to write: " << write.body.dump();
  node_->Stop();  // while Redis is still up, so the node resigns cleanly
}

}  // namespace
}  // namespace kvchaos::service
