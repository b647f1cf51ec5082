// CheckHealth: the checks themselves (pure, any clock), the coordination and thread checks driven
// by a real LeaderElector over a scripted backend on a manual clock (backend silent, lock thread
// stuck), and the HTTP answer of a real node: 200 with every check listed, 503 when one fails.
#include "core/service/node_health.h"

#include <gtest/gtest.h>

#include "core/election/tests/manual_runtime.h"
#include "core/election/tests/scripted_backend.h"
#include "core/service/node_server.h"
#include "core/service/tests/flaky_indexer.h"
#include "core/service/tests/node_test_util.h"
#include "core/service/watched_backend.h"

namespace kvchaos::service {
namespace {

using election::testing::ManualRuntime;
using election::testing::Op;
using election::testing::Phase;
using election::testing::ScriptedBackend;
using election::testing::WaitFor;
using nlohmann::json;

const HealthCheck* Find(const HealthReport& r, const std::string& name) {
  for (const auto& c : r.checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

HealthInputs FreshFollower() {
  HealthInputs in;
  in.started_at = MonoTime(std::chrono::hours(1));
  in.now = in.started_at + Millis(5000);
  in.max_age = Millis(1000);
  in.backend_answer = in.now - Millis(100);
  in.lock_loop_tick = in.now - Millis(100);
  in.lease_check_tick = in.now - Millis(50);
  return in;
}

TEST(NodeHealthTest, AFollowerWithALiveBackendAndTickingThreadsIsHealthy) {
  HealthReport r = EvaluateHealth(FreshFollower());
  EXPECT_TRUE(r.healthy) << r.Problems();
  EXPECT_EQ(Find(r, "indexer"), nullptr) << "only a node that holds a term pings the indexer";
  ASSERT_NE(Find(r, "coordination_backend"), nullptr);
  EXPECT_EQ(*Find(r, "coordination_backend")->age_ms, 100);
}

TEST(NodeHealthTest, EachFailedCheckMakesTheNodeUnhealthyAndSaysWhy) {
  HealthInputs silent = FreshFollower();
  silent.backend_answer = silent.now - Millis(1500);
  HealthReport r = EvaluateHealth(silent);
  EXPECT_FALSE(r.healthy);
  EXPECT_FALSE(Find(r, "coordination_backend")->ok);
  EXPECT_NE(r.Problems().find("1500 ms ago (limit 1000 ms)"), std::string::npos) << r.Problems();

  HealthInputs never = FreshFollower();
  never.backend_answer.reset();
  r = EvaluateHealth(never);
  EXPECT_FALSE(r.healthy) << "no answer in 5 s since start is a silent backend";
  EXPECT_NE(r.Problems().find("not seen since the node started 5000 ms ago"), std::string::npos) << r.Problems();

  HealthInputs stuck = FreshFollower();
  stuck.lease_check_tick = stuck.now - Millis(3000);
  r = EvaluateHealth(stuck);
  EXPECT_FALSE(Find(r, "lease_check_thread")->ok);
  EXPECT_TRUE(Find(r, "lock_thread")->ok);

  HealthInputs leader = FreshFollower();
  leader.holds_term = true;
  leader.indexer_ping = Status::Unavailable("redis down");
  leader.data_plane_enabled = false;
  leader.data_plane_detail = "recovering (2 failed attempts; last: x)";
  r = EvaluateHealth(leader);
  EXPECT_FALSE(Find(r, "indexer")->ok);
  EXPECT_NE(Find(r, "indexer")->reason.find("redis down"), std::string::npos);
  EXPECT_FALSE(Find(r, "data_plane")->ok);
  EXPECT_NE(Find(r, "data_plane")->reason.find("recovering (2 failed"), std::string::npos);

  leader.indexer_ping = Status::Ok();
  leader.data_plane_enabled = true;
  EXPECT_TRUE(EvaluateHealth(leader).healthy) << EvaluateHealth(leader).Problems();
  leader.testing_knobs = "kvcm.testing.serve_without_lease_check";
  EXPECT_FALSE(EvaluateHealth(leader).healthy) << "a node with a test-only knob on is never healthy";
}

// An elector on a manual clock over a scripted backend, observed the way MetaNode::Health does.
class ElectorHealthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto owned = std::make_unique<ScriptedBackend>(rt_);
    scripted_ = owned.get();
    watched_ = std::make_unique<WatchedBackend>(rt_, std::move(owned));
    election::LeaderElectorOptions o;
    o.node_id = "n1";
    o.lease_ms = 1000;
    o.loop_interval_ms = 100;
    elector_ = std::make_unique<election::LeaderElector>(rt_, *watched_, o, election::LeaderElectorCallbacks{});
    started_ = rt_.Now();
    ASSERT_TRUE(elector_->Start().ok());
    ASSERT_TRUE(WaitFor([&] { return elector_->state() == election::ElectorState::kLeader; }));
  }
  void TearDown() override {
    scripted_->ClearFailures();
    scripted_->Release(Op::kRenewLock);
    elector_->Stop();
  }
  HealthReport Check() {
    HealthInputs in;
    in.started_at = started_;
    in.max_age = Millis(10 * 100);
    FillElectorHealth(elector_->Snapshot(), watched_->last_answer(), &in);
    in.indexer_ping = Status::Ok();
    in.data_plane_enabled = true;
    in.now = rt_.Now();
    return EvaluateHealth(in);
  }
  // Moves the manual clock in loop-sized steps, letting the lease-check thread wake on each.
  void AdvanceLoops(int loops) {
    for (int i = 0; i < loops; ++i) {
      rt_.Advance(Millis(100));
      ASSERT_TRUE(WaitFor([&] { return elector_->Snapshot().lease_check_tick == rt_.Now(); }))
          << "the lease-check thread did not wake at step " << i;
    }
  }

  ManualRuntime rt_;
  ScriptedBackend* scripted_ = nullptr;
  std::unique_ptr<WatchedBackend> watched_;
  std::unique_ptr<election::LeaderElector> elector_;
  MonoTime started_{};
};

TEST_F(ElectorHealthTest, ALeaderRenewingOnTimeIsHealthy) {
  AdvanceLoops(15);
  ASSERT_TRUE(WaitFor([&] { return elector_->Snapshot().lock_loop_tick >= rt_.Now() - Millis(100); }));
  HealthReport r = Check();
  EXPECT_TRUE(r.healthy) << r.Problems();
  EXPECT_NE(Find(r, "indexer"), nullptr) << "a leader's report includes the indexer";
}

TEST_F(ElectorHealthTest, ASilentBackendIsReportedAfterTheLimit) {
  const Status down = Status::Unavailable("redis: connection refused");
  scripted_->Fail(Op::kRenewLock, down, -1);
  scripted_->Fail(Op::kGetLockHolder, down, -1);
  scripted_->Fail(Op::kTryLock, down, -1);
  AdvanceLoops(5);
  EXPECT_TRUE(Find(Check(), "coordination_backend")->ok) << "500 ms of silence is within the limit";
  AdvanceLoops(8);
  HealthReport r = Check();
  EXPECT_FALSE(r.healthy);
  EXPECT_FALSE(Find(r, "coordination_backend")->ok) << r.Problems();
  EXPECT_TRUE(Find(r, "lock_thread")->ok) << "the lock thread still runs (its calls fail): " << r.Problems();
  EXPECT_EQ(Find(r, "indexer"), nullptr) << "the lease ran out, so the node no longer holds a term";
}

TEST_F(ElectorHealthTest, AStuckLockThreadIsReportedWhileTheLeaseCheckThreadTicks) {
  scripted_->ParkNext(Op::kRenewLock, Phase::kBeforeCall);
  rt_.Advance(Millis(100));
  ASSERT_TRUE(scripted_->WaitParked(Op::kRenewLock)) << "the renewal did not reach the backend";
  AdvanceLoops(12);
  HealthReport r = Check();
  EXPECT_FALSE(r.healthy);
  EXPECT_FALSE(Find(r, "lock_thread")->ok) << r.Problems();
  EXPECT_GE(*Find(r, "lock_thread")->age_ms, 1200);
  EXPECT_TRUE(Find(r, "lease_check_thread")->ok) << r.Problems();
  scripted_->Release(Op::kRenewLock);
}

NodeConfig SoloConfig() {
  NodeConfig c = testing::FastNodeConfig("solo");
  c.health_max_silence_loops = 100;  // 2 s: robust on a loaded machine or under sanitizers
  return c;
}

using testing::Reply;

Reply CheckHealth(int port) { return testing::Post(port, "CheckHealth", "{}"); }

TEST(NodeHealthHttpTest, HealthyIs200AndUnhealthyIs503WithEveryCheckListed) {
  auto owned = std::make_unique<testing::FlakyIndexer>();
  testing::FlakyIndexer* indexer = owned.get();
  MetaNodeParts parts;
  parts.indexer = std::move(owned);
  NodeServer node(Runtime::Real(), SoloConfig(), 1, std::move(parts));
  ASSERT_TRUE(node.Start().ok());
  ASSERT_TRUE(testing::WaitLeader(node));

  Reply ok = CheckHealth(node.admin_http_port());
  ASSERT_EQ(ok.status, 200) << ok.body.dump();
  EXPECT_EQ(ok.body["healthy"], true);
  std::vector<std::string> names;
  for (const auto& c : ok.body["checks"]) names.push_back(c["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"coordination_backend", "lock_thread", "lease_check_thread", "indexer",
                                             "data_plane", "testing_knobs"}))
      << ok.body.dump();
  EXPECT_TRUE(ok.body["checks"][0]["age_ms"].is_number()) << ok.body.dump();

  indexer->FailPing(true);
  Reply bad = CheckHealth(node.admin_http_port());
  EXPECT_EQ(bad.status, 503) << bad.body.dump();
  EXPECT_EQ(bad.body["code"], "Unavailable");
  EXPECT_EQ(bad.body["healthy"], false);
  EXPECT_NE(bad.body.value("message", "").find("ping failed on purpose"), std::string::npos) << bad.body.dump();
  EXPECT_EQ(bad.body["checks"][3]["name"], "indexer");
  EXPECT_EQ(bad.body["checks"][3]["ok"], false) << bad.body.dump();
  indexer->FailPing(false);
  EXPECT_EQ(CheckHealth(node.admin_http_port()).status, 200) << "health comes back with the indexer";

  Reply bad_request = testing::Post(node.admin_http_port(), "CheckHealth", R"({"verbose": true})");
  EXPECT_EQ(bad_request.status, 400) << "unknown fields are refused: " << bad_request.body.dump();
}

}  // namespace
}  // namespace kvchaos::service
