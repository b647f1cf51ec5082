// The leader a node names (GetClusterInfo, NotLeader answers) costs no coordination call in the
// steady state: a follower asked by many clients does not ask the backend each time, yet names a
// new leader within a loop interval; a leader names itself at once and without asking (virtual time).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <regex>
#include <string>

#include "core/election/coordination_memory_backend.h"
#include "core/election/node_registry.h"
#include "core/service/meta_node.h"
#include "core/service/node_api.h"
#include "core/service/tests/node_test_util.h"
#include "sim/virtual_time.h"

namespace kvchaos::service {
namespace {

using nlohmann::json;

// How many GetLockHolder calls the node made so far (its coordination metrics).
int LockHolderReads(const MetaNode& node) {
  static const std::regex sample(R"(kvchaos_node_coordination_requests_total\{call="GetLockHolder",code="OK"\} (\d+))");
  const std::string text = node.coordination_metrics().Render();
  std::smatch m;
  return std::regex_search(text, m, sample) ? std::stoi(m[1]) : 0;
}

void Publish(election::CoordinationBackend& backend, const std::string& id, const std::string& host) {
  const election::NodeEndpoint ep{id, host, 0, 7001, 0, 7002};
  ASSERT_TRUE(backend.SetValue(std::string(election::kNodeInfoKeyPrefix) + id, election::NodeEndpointToJson(ep)).ok());
}

TEST(LeaderViewTest, AFollowerAnswersFromAViewAtMostOneLoopOld) {
  sim::SimRuntime runtime(sim::UnitTestOptions());
  const std::string unfinished = sim::RunOnVirtualTime(runtime, [&] {
    auto owned = std::make_unique<election::CoordinationMemoryBackend>(runtime);
    election::CoordinationMemoryBackend& backend = *owned;
    ASSERT_TRUE(backend.TryLock(election::kLeaderLockKey, "other-a", std::chrono::seconds(60), election::kNoDeadline).ok());
    Publish(backend, "other-a", "10.0.0.1");
    Publish(backend, "other-b", "10.0.0.2");
    NodeConfig c = testing::FastNodeConfig("follower");  // loop interval 20 ms
    MetaNodeParts parts;
    parts.backend = std::move(owned);
    MetaNode node(runtime, c, 7, std::move(parts));
    NodeApi api(node);
    ASSERT_TRUE(node.Start(/*meta_http_port=*/1, /*admin_http_port=*/2).ok());
    auto info = [&] { return json::parse(api.Handle(ApiPort::kMeta, "GetClusterInfo", "{}").body); };

    EXPECT_EQ(info()["leader_endpoint"]["host"], "10.0.0.1") << info().dump();
    const int reads_before = LockHolderReads(node);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(info()["leader_id"], "other-a");
    EXPECT_LE(LockHolderReads(node) - reads_before, 1)
        << "100 answers at one instant must share one view, not read the lock holder 100 times";

    // The lock moves to another node: followers name it within one loop interval.
    ASSERT_TRUE(backend.Unlock(election::kLeaderLockKey, "other-a", election::kNoDeadline).ok());
    ASSERT_TRUE(backend.TryLock(election::kLeaderLockKey, "other-b", std::chrono::seconds(60), election::kNoDeadline).ok());
    runtime.SleepFor(std::chrono::milliseconds(21));
    EXPECT_EQ(info()["leader_id"], "other-b") << "a view older than a loop interval was used";
    EXPECT_EQ(info()["leader_endpoint"]["host"], "10.0.0.2") << info().dump();

    // The lock is free: this node takes it and names itself at once, whatever the view said.
    ASSERT_TRUE(backend.Unlock(election::kLeaderLockKey, "other-b", election::kNoDeadline).ok());
    ASSERT_TRUE(node.elector().WaitForState(election::ElectorState::kLeader, runtime.Now() + std::chrono::seconds(5)));
    EXPECT_EQ(info()["leader_id"], "follower") << info().dump();
    const int reads_as_leader = LockHolderReads(node);
    for (int i = 0; i < 100; ++i) {
      runtime.SleepFor(std::chrono::milliseconds(5));
      EXPECT_EQ(info()["leader_id"], "follower");
    }
    EXPECT_EQ(LockHolderReads(node), reads_as_leader) << "a leader names itself without asking the backend";
    node.Stop();
  });
  EXPECT_EQ(unfinished, "");
}

}  // namespace
}  // namespace kvchaos::service
