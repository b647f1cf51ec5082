// NodeRegistry: node info and heartbeats on a manual clock — departed nodes drop out after the
// TTL, a stopped node at once; the leader's endpoint is found through the lock holder; endpoint
// JSON errors name the field.
#include "core/election/node_registry.h"

#include <gtest/gtest.h>

#include "core/election/coordination_memory_backend.h"
#include "core/election/leader_elector.h"
#include "core/election/tests/elector_fixture.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;
using testing::ManualRuntime;
using testing::WaitFor;

NodeEndpoint Endpoint(const std::string& id, int base) {
  return {id, "10.0.0." + std::to_string(base), base + 1, base + 2, base + 3, base + 4};
}

std::vector<std::string> Ids(const std::vector<LiveNode>& nodes) {
  std::vector<std::string> ids;
  for (const auto& n : nodes) ids.push_back(n.endpoint.node_id);
  return ids;
}

TEST(NodeEndpointJsonTest, RoundTripAndFieldErrors) {
  const NodeEndpoint e = Endpoint("n1", 10);
  auto back = NodeEndpointFromJson(NodeEndpointToJson(e), "test");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, e);
  struct Case {
    std::string json;
    std::string expect;
  };
  for (const Case& c : std::vector<Case>{
           {"[1]", "expected a JSON object"},
           {"{", "not valid JSON"},
           {R"({"host":"h"})", "'node_id' is missing"},
           {R"({"node_id":1,"host":"h"})", "'node_id' must be a string"},
           {R"({"node_id":"n","host":"h","admin_http_port":"80"})", "'admin_http_port' must be an integer"},
           {R"({"node_id":"n","host":"h","meta_http_port":70000})", "'meta_http_port' = 70000"},
       }) {
    auto r = NodeEndpointFromJson(c.json, "node info of 'n'");
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << c.json << " -> " << r.status().message();
    EXPECT_NE(r.status().message().find("node info of 'n'"), std::string::npos) << r.status().message();
  }
  auto extra = NodeEndpointFromJson(R"({"node_id":"n","host":"h","future_field":true})", "x");
  EXPECT_TRUE(extra.ok()) << "unknown fields from newer nodes must be ignored";
}

TEST(NodeIdTest, UpstreamFormatAndSeededRandomPart) {
  Rng a(42), b(42), c(43);
  const std::string id = GenerateNodeId("10.0.0.1", 8080, a);
  ASSERT_EQ(id.size(), std::string("10.0.0.1:8080_").size() + 8) << id;
  EXPECT_EQ(id.rfind("10.0.0.1:8080_", 0), 0u) << id;
  EXPECT_EQ(GenerateNodeId("10.0.0.1", 8080, b), id) << "same seed, same id";
  EXPECT_NE(GenerateNodeId("10.0.0.1", 8080, c), id);
}

TEST(NodeRegistryTest, DepartedNodesDisappearAfterTheTtlAndStoppedNodesAtOnce) {
  ManualRuntime rt;
  CoordinationMemoryBackend backend(rt);
  NodeRegistry n1(rt, backend, Endpoint("n1", 10), 100ms, 500ms);
  NodeRegistry n2(rt, backend, Endpoint("n2", 20), 100ms, 500ms);
  NodeRegistry n3(rt, backend, Endpoint("n3", 30), 100ms, 500ms);
  ASSERT_TRUE(n2.Start().ok());
  ASSERT_TRUE(n1.Start().ok());
  ASSERT_TRUE(n3.Start().ok());
  auto live = n1.ListLiveNodes();
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(Ids(*live), (std::vector<std::string>{"n1", "n2", "n3"})) << "sorted by node id";
  EXPECT_EQ(live->at(1).endpoint, Endpoint("n2", 20));
  EXPECT_GT(live->at(1).heartbeat_wall_ms, 0);

  // n2 leaves cleanly (a crash is the next test).
  n2.Stop();
  EXPECT_EQ(Ids(*n1.ListLiveNodes()), (std::vector<std::string>{"n1", "n3"})) << "a stopped node must leave at once";
  EXPECT_TRUE(n1.GetNodeInfo("n2").ok()) << "node info stays (upstream behaviour)";

  // Heartbeats keep live nodes listed across many TTLs.
  for (int i = 0; i < 30; ++i) {
    rt.Advance(100ms);
    WaitFor([] { return false; }, std::chrono::milliseconds(2));
  }
  EXPECT_EQ(Ids(*n1.ListLiveNodes()), (std::vector<std::string>{"n1", "n3"})) << "a heartbeating node dropped out";
}

TEST(NodeRegistryTest, ACrashedNodeAgesOutWithinOneTtl) {
  ManualRuntime rt;
  CoordinationMemoryBackend backend(rt);
  NodeRegistry n1(rt, backend, Endpoint("n1", 10), 100ms, 500ms);
  ASSERT_TRUE(n1.Start().ok());
  // A node that wrote one heartbeat and then died without a goodbye.
  NodeRegistry ghost(rt, backend, Endpoint("ghost", 90), 100ms, 500ms);
  ASSERT_TRUE(ghost.Heartbeat().ok());
  EXPECT_EQ(Ids(*n1.ListLiveNodes()), (std::vector<std::string>{"ghost", "n1"}));
  rt.Advance(499ms);
  EXPECT_EQ(Ids(*n1.ListLiveNodes()).size(), 2u);
  rt.Advance(1ms);
  ASSERT_TRUE(WaitFor([&] {
    auto l = n1.ListLiveNodes();
    return l.ok() && Ids(*l) == std::vector<std::string>{"n1"};
  })) << "a node without heartbeats stayed listed past its TTL";
}

TEST(NodeRegistryTest, LeaderEndpointFollowsTheLockHolder) {
  ManualRuntime rt;
  CoordinationMemoryBackend backend(rt);
  NodeRegistry reg(rt, backend, Endpoint("n1", 10), 100ms, 500ms);
  ASSERT_TRUE(reg.Start().ok());
  auto none = reg.GetLeaderEndpoint();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value()) << "no leader yet";
  testing::CallbackLog log;
  LeaderElector elector(rt, backend, testing::TestOptions("n1"), log.Callbacks());
  ASSERT_TRUE(elector.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return elector.IsLeader(); }));
  auto leader = reg.GetLeaderEndpoint();
  ASSERT_TRUE(leader.ok() && leader->has_value());
  EXPECT_EQ(**leader, Endpoint("n1", 10));
  // A leader that never published its info is reported, not invented.
  ASSERT_TRUE(backend.TryLock("other-lock", "n9", 10s, kNoDeadline).ok());
  auto unknown = reg.GetLeaderEndpoint("other-lock");
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("'n9'"), std::string::npos) << unknown.status().message();
}

// Parsed node infos are kept by their text: a node that restarts with another endpoint is read
// afresh, and a text that does not parse is an error naming the node every time it is read.
TEST(NodeRegistryTest, NodeInfoIsReadAfreshWhenItsTextChanges) {
  ManualRuntime rt;
  CoordinationMemoryBackend backend(rt);
  NodeRegistry reader(rt, backend, Endpoint("n2", 20), 100ms, 500ms);
  const std::string key = std::string(kNodeInfoKeyPrefix) + "n1";
  ASSERT_TRUE(backend.SetValue(key, NodeEndpointToJson(Endpoint("n1", 10))).ok());
  for (int i = 0; i < 2; ++i) {
    auto info = reader.GetNodeInfo("n1");
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(*info, Endpoint("n1", 10)) << "read " << i;
  }
  ASSERT_TRUE(backend.SetValue(key, NodeEndpointToJson(Endpoint("n1", 30))).ok());  // restarted
  auto moved = reader.GetNodeInfo("n1");
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(*moved, Endpoint("n1", 30)) << "the registry answered the endpoint n1 had before it restarted";
  ASSERT_TRUE(backend.SetValue(key, "{not json").ok());
  for (int i = 0; i < 2; ++i) {
    auto bad = reader.GetNodeInfo("n1");
    ASSERT_FALSE(bad.ok()) << "a text that does not parse was answered, read " << i;
    EXPECT_NE(bad.status().message().find("'n1'"), std::string::npos) << bad.status().message();
  }
  ASSERT_TRUE(backend.SetValue(key, NodeEndpointToJson(Endpoint("n1", 10))).ok());
  EXPECT_EQ(*reader.GetNodeInfo("n1"), Endpoint("n1", 10)) << "a text seen before must answer its own endpoint";
}

TEST(NodeRegistryTest, BadSettingsAreRejected) {
  ManualRuntime rt;
  CoordinationMemoryBackend backend(rt);
  NodeRegistry reg(rt, backend, Endpoint("n1", 10), 500ms, 500ms);
  Status s = reg.Start();
  EXPECT_EQ(s.code(), StatusCode::kInvalidConfig);
  EXPECT_NE(s.message().find("ttl"), std::string::npos) << s.message();
  EXPECT_TRUE(backend.ListValues("")->empty()) << "a rejected start wrote something";
}

}  // namespace
}  // namespace kvchaos::election
