// Promotion recovery: a recovery that fails is retried within the same term (same fencing token)
// and the data plane opens only once it succeeded; one that keeps failing for a lease makes the
// node demote itself, and it leads again (a new term) once the indexer is back.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/election/tests/manual_runtime.h"
#include "core/service/meta_node.h"
#include "core/service/tests/flaky_indexer.h"
#include "core/service/tests/node_test_util.h"

namespace kvchaos::service {
namespace {

using election::testing::WaitFor;
using nlohmann::json;

using testing::Post;
using testing::Reply;

const char* kStorage = R"({"storage": {"type": "posix", "global_unique_name": "nfs"}})";

class RecoveryTest : public ::testing::Test {
 protected:
  void Start(int64_t lease_ms) {
    auto owned = std::make_unique<testing::FlakyIndexer>();
    indexer_ = owned.get();
    indexer_->FailListKeys(failures_);
    NodeConfig c = testing::FastNodeConfig("solo");
    c.lease_ms = lease_ms;
    MetaNodeParts parts;
    parts.indexer = std::move(owned);
    node_ = std::make_unique<MetaNode>(Runtime::Real(), c, 7, std::move(parts));
    ASSERT_TRUE(node_->Start().ok());
  }
  json Manager() { return Post(node_->admin_http_port(), "GetManagerClusterInfo", "{}").body; }

  int failures_ = 0;
  testing::FlakyIndexer* indexer_ = nullptr;
  std::unique_ptr<MetaNode> node_;
};

TEST_F(RecoveryTest, AFailedRecoveryIsRetriedWithinTheTermAndTheDataPlaneOpensAfter) {
  failures_ = 3;
  Start(/*lease_ms=*/5000);
  ASSERT_TRUE(node_->elector().WaitForState(election::ElectorState::kLeader,
                                            Runtime::Real().Now() + std::chrono::seconds(10)))
      << "the node must become leader once recovery succeeds";
  EXPECT_EQ(indexer_->failed_list_calls(), 3) << "every failed attempt must have been retried";
  json m = Manager();
  EXPECT_EQ(m["fencing_token"], 1) << "recovery was retried within the first term, not a new one: " << m.dump();
  Reply add = Post(node_->meta_http_port(), "AddStorage", kStorage);
  EXPECT_EQ(add.status, 200) << "the data plane must be open after recovery: " << add.body.dump();
}

TEST_F(RecoveryTest, TheDataPlaneStaysClosedWhileRecoveringAndTheNodeDemotesItselfAfterALease) {
  failures_ = -1;
  Start(/*lease_ms=*/1200);
  ASSERT_TRUE(WaitFor([&] { return indexer_->failed_list_calls() >= 2; })) << "recovery was not retried";
  Reply write = Post(node_->meta_http_port(), "StartWriteCache", R"({"keys": ["k"]})");
  EXPECT_EQ(write.status, 421) << "no data-plane call before recovery succeeds: " << write.body.dump();
  EXPECT_NE(write.body.value("message", "").find("has not recovered yet"), std::string::npos) << write.body.dump();
  Reply health = Post(node_->admin_http_port(), "CheckHealth", "{}");
  EXPECT_EQ(health.status, 503) << health.body.dump();
  EXPECT_NE(health.body.value("problems", "").find("recovering"), std::string::npos) << health.body.dump();

  // Recovery keeps failing: within about a lease the node gives the lock up instead of holding it.
  ASSERT_TRUE(WaitFor([&] { return Manager().value("leader_id", "x").empty(); }, std::chrono::seconds(10)))
      << "the node kept the lock although it could not recover: " << Manager().dump();
  EXPECT_NE(Manager()["state"], "LEADER");

  // The indexer is back: after its no-campaign pause the node leads again, in a new term.
  indexer_->FailListKeys(0);
  ASSERT_TRUE(WaitFor([&] { return Manager().value("is_leader", false); }, std::chrono::seconds(10)))
      << Manager().dump();
  EXPECT_GT(Manager()["fencing_token"].get<uint64_t>(), 1u) << "a new term after the self-demotion";
  Reply add = Post(node_->meta_http_port(), "AddStorage", kStorage);
  EXPECT_EQ(add.status, 200) << add.body.dump();
}

}  // namespace
}  // namespace kvchaos::service
