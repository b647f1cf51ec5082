// The node's HTTP/JSON API on loopback: cluster info, the leader's data plane, strict request
// checking (400 naming the field, nothing changed) and NotLeader answers from a follower.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "core/common/runtime.h"
#include "core/service/node_server.h"
#include "core/service/tests/node_test_util.h"
#include "testing/temp_dir.h"

namespace kvchaos::service {
namespace {

using nlohmann::json;

using testing::Post;
using testing::Reply;
using testing::WaitLeader;

const char* kStorage = R"({"storage": {"type": "posix", "global_unique_name": "nfs",
  "integrity": {"enable_meta_checksum": true, "algo": "crc64_full"}}})";

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = std::make_unique<NodeServer>(Runtime::Real(), testing::FastNodeConfig("solo"), 1);
    ASSERT_TRUE(node_->Start().ok());
    ASSERT_TRUE(WaitLeader(*node_)) << "a single node must lead on memory://";
    // The data plane is enabled once OnBecomeLeader returned; the state says LEADER only then.
    Reply r = Post(node_->meta_http_port(), "AddStorage", kStorage);
    ASSERT_EQ(r.status, 200) << r.body.dump();
  }
  int meta() const { return node_->meta_http_port(); }
  int admin() const { return node_->admin_http_port(); }
  std::unique_ptr<NodeServer> node_;
};

TEST_F(HttpApiTest, ClusterInfoNamesTheLeaderOnBothPorts) {
  for (int port : {meta(), admin()}) {
    Reply r = Post(port, "GetClusterInfo", "");
    ASSERT_EQ(r.status, 200) << r.body.dump();
    EXPECT_EQ(r.body["self_id"], "solo");
    EXPECT_EQ(r.body["leader_id"], "solo");
    EXPECT_EQ(r.body["leader_endpoint"]["meta_http_port"], meta());
  }
  Reply m = Post(admin(), "GetManagerClusterInfo", "{}");
  ASSERT_EQ(m.status, 200) << m.body.dump();
  EXPECT_EQ(m.body["state"], "LEADER");
  EXPECT_GT(m.body["fencing_token"].get<uint64_t>(), 0u);
  EXPECT_TRUE(m.body["lease_expiry_wall_ms"].is_number()) << m.body.dump();
  Reply nodes = Post(admin(), "ListNodes", "");
  ASSERT_EQ(nodes.status, 200) << nodes.body.dump();
  ASSERT_EQ(nodes.body["nodes"].size(), 1u) << nodes.body.dump();
  EXPECT_EQ(nodes.body["nodes"][0]["node_id"], "solo");
  Reply h = Post(admin(), "CheckHealth", "");
  EXPECT_EQ(h.body["serving"], true) << h.body.dump();
}

TEST_F(HttpApiTest, WriteThenReadThroughTheDataPlane) {
  Reply s = Post(meta(), "StartWriteCache", R"({"keys": ["k1", "k2"]})");
  ASSERT_EQ(s.status, 200) << s.body.dump();
  std::string session = s.body["session"]["session_id"];
  Reply m = Post(admin(), "GetManagerClusterInfo", "{}");
  EXPECT_EQ(s.body["session"]["fencing_token"], m.body["fencing_token"])
      << "a session names the term its index write was fenced under (the real-mode observer judges stale writes by it)";
  Reply f = Post(meta(), "FinishWriteCache",
                 json{{"session_id", session}, {"keys", {"k1", "k2"}}, {"checksums", {0, 42}}}.dump());
  ASSERT_EQ(f.status, 200) << f.body.dump();
  Reply g = Post(meta(), "GetCacheLocation", R"({"keys": ["k1", "k2", "k3"]})");
  ASSERT_EQ(g.status, 200) << g.body.dump();
  ASSERT_EQ(g.body["locations"].size(), 3u);
  EXPECT_EQ(g.body["locations"][1]["checksum"], 42) << g.body.dump();
  EXPECT_TRUE(g.body["locations"][2].is_null()) << "k3 was never written";
  EXPECT_FALSE(g.body["locations"][1].contains("iov_layout")) << "an old client sent no layouts";
  EXPECT_EQ(g.body["served_by"], "solo") << "a read names the node that answered it: " << g.body.dump();
  EXPECT_EQ(g.body["fencing_token"], m.body["fencing_token"]) << "and the term it served under: " << g.body.dump();
  Reply rm = Post(meta(), "RemoveCache", R"({"keys": ["k1"]})");
  ASSERT_EQ(rm.status, 200) << rm.body.dump();
  g = Post(meta(), "GetCacheLocation", R"({"keys": ["k1"]})");
  EXPECT_TRUE(g.body["locations"][0].is_null()) << g.body.dump();
}

TEST_F(HttpApiTest, FinishWriteCacheStoresIovLayoutsPerKey) {
  Reply s = Post(meta(), "StartWriteCache", R"({"keys": ["k1", "k2"]})");
  ASSERT_EQ(s.status, 200) << s.body.dump();
  std::string session = s.body["session"]["session_id"];
  Reply f = Post(meta(), "FinishWriteCache",
                 json{{"session_id", session},
                      {"keys", {"k1", "k2"}},
                      {"checksums", {5, 6}},
                      {"iov_layouts", json::parse("[[[64, 65536]], null]")}}
                     .dump());
  ASSERT_EQ(f.status, 200) << f.body.dump();
  Reply g = Post(meta(), "GetCacheLocation", R"({"keys": ["k1", "k2"]})");
  ASSERT_EQ(g.status, 200) << g.body.dump();
  EXPECT_EQ(g.body["locations"][0]["iov_layout"], json::parse("[[64, 65536]]")) << g.body.dump();
  EXPECT_FALSE(g.body["locations"][1].contains("iov_layout")) << "null: no layout for k2: " << g.body.dump();
}

TEST_F(HttpApiTest, BadIovLayoutsAre400NamingTheEntryAndCommitNothing) {
  Reply s = Post(meta(), "StartWriteCache", R"({"keys": ["a"]})");
  ASSERT_EQ(s.status, 200) << s.body.dump();
  const std::string session = s.body["session"]["session_id"];
  struct Case {
    std::string layouts, expect;
  };
  for (const Case& c : std::vector<Case>{
           {R"("64x65536")", "iov_layouts: expected an array"},
           {R"({"a": 1})", "iov_layouts: expected an array"},
           {R"([5])", "iov_layouts[0]: expected an array of [count, size] pairs"},
           {R"([[[0, 4096]]])", "iov_layouts[0][0]: count 0"},
           {R"([[[2, 0]]])", "iov_layouts[0][0]: IOV size 0"},
           {R"([[[1, "4096"]]])", "iov_layouts[0][0][1]: expected a non-negative integer size"},
           {R"([[[4, 4611686018427387904]]])", "iov_layouts[0][0]: 4 x 4611686018427387904 bytes overflows"},
           {R"([[[1, 4096]], [[1, 4096]]])", "2 IOV layouts for 1 keys"},
       }) {
    const std::string body = R"({"session_id": ")" + session + R"(", "keys": ["a"], "checksums": [1], "iov_layouts": )" +
                             c.layouts + "}";
    Reply r = Post(meta(), "FinishWriteCache", body);
    EXPECT_EQ(r.status, 400) << body << " -> " << r.body.dump();
    EXPECT_EQ(r.body["code"], "InvalidArgument") << r.body.dump();
    EXPECT_NE(r.body.value("message", "").find(c.expect), std::string::npos)
        << body << ": message should mention '" << c.expect << "': " << r.body.dump();
  }
  Reply g = Post(meta(), "GetCacheLocation", R"({"keys": ["a"]})");
  ASSERT_EQ(g.status, 200);
  EXPECT_TRUE(g.body["locations"][0].is_null()) << "a rejected finish must not commit 'a': " << g.body.dump();
}

TEST_F(HttpApiTest, BadRequestsAre400NamingTheFieldAndChangeNothing) {
  struct Case {
    std::string call, body, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"StartWriteCache", "{\"keys\": [", "not valid JSON"},
           {"StartWriteCache", "[1]", "JSON object"},
           {"StartWriteCache", R"({"keys": ["a"], "ttl": 5})", "ttl: unknown field"},
           {"StartWriteCache", R"({"keys": "a"})", "keys: expected an array"},
           {"StartWriteCache", R"({"keys": ["a", 7]})", "keys[1]: expected a string"},
           {"StartWriteCache", R"({})", "keys: missing"},
           {"FinishWriteCache", R"({"session_id": 3, "keys": ["a"]})", "session_id: expected a string"},
           {"FinishWriteCache", R"({"session_id": "s", "keys": ["a"], "checksums": [1.5]})", "checksums[0]"},
           {"RemoveCache", R"({"keys": ["a"], "force": true})", "force: unknown field"},
           {"AddStorage", R"({"storage": {"type": "posix"}})", "storage.global_unique_name"},
           {"AddStorage", R"({"storage": "nfs"})", "storage: expected an object"},
       }) {
    Reply r = Post(meta(), c.call, c.body);
    EXPECT_EQ(r.status, 400) << c.call << " " << c.body << " -> " << r.body.dump();
    EXPECT_EQ(r.body["code"], "InvalidArgument") << r.body.dump();
    EXPECT_NE(r.body.value("message", "").find(c.expect), std::string::npos)
        << c.call << " " << c.body << ": message should mention '" << c.expect << "': " << r.body.dump();
  }
  Reply g = Post(meta(), "GetCacheLocation", R"({"keys": ["a"]})");
  ASSERT_EQ(g.status, 200);
  EXPECT_TRUE(g.body["locations"][0].is_null()) << "a rejected request must not have written 'a'";
  Reply d = Post(admin(), "LeaderDemote", R"({"forbid_campaign_time_ms": "soon"})");
  EXPECT_EQ(d.status, 400) << d.body.dump();
  EXPECT_TRUE(node_->elector().IsLeader()) << "a rejected demote must not demote";
}

TEST_F(HttpApiTest, DemotedNodeRefusesWrites) {
  Reply d = Post(admin(), "LeaderDemote", R"({"forbid_campaign_time_ms": 60000})");
  ASSERT_EQ(d.status, 200) << d.body.dump();
  Reply s = Post(meta(), "StartWriteCache", R"({"keys": ["k"]})");
  EXPECT_EQ(s.status, 421) << s.body.dump();
  EXPECT_EQ(s.body["code"], "NotLeader") << s.body.dump();
}

TEST(HttpApiFollowerTest, FollowerAnswersNotLeaderWithTheLeadersEndpoint) {
  kvchaos::testing::TempDir dir("kvchaos-node");
  std::string uri = "file://" + dir.path().string();
  NodeServer a(Runtime::Real(), testing::FastNodeConfig("node-a", uri), 1);
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(WaitLeader(a));
  NodeServer b(Runtime::Real(), testing::FastNodeConfig("node-b", uri), 2);
  ASSERT_TRUE(b.Start().ok());
  Reply r = Post(b.meta_http_port(), "StartWriteCache", R"({"keys": ["k"]})");
  EXPECT_EQ(r.status, 421) << r.body.dump();
  EXPECT_EQ(r.body["code"], "NotLeader");
  EXPECT_EQ(r.body["leader_endpoint"]["node_id"], "node-a") << r.body.dump();
  EXPECT_EQ(r.body["leader_endpoint"]["meta_http_port"], a.meta_http_port()) << r.body.dump();
  Reply info = Post(b.admin_http_port(), "GetClusterInfo", "");
  EXPECT_EQ(info.body["self_id"], "node-b");
  EXPECT_EQ(info.body["leader_id"], "node-a");
}

// Behind a port forward (or real mode's client-path proxies) clients must be sent to the
// advertised ports, not the ones the node binds.
TEST(HttpApiFollowerTest, TheLeadersAdvertisedPortsAreWhatClientsAreSentTo) {
  kvchaos::testing::TempDir dir("kvchaos-node");
  std::string uri = "file://" + dir.path().string();
  NodeConfig forwarded = testing::FastNodeConfig("node-a", uri);
  forwarded.advertised_meta_port = 41001;
  forwarded.advertised_admin_port = 41002;
  NodeServer a(Runtime::Real(), forwarded, 1);
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(WaitLeader(a));
  NodeServer b(Runtime::Real(), testing::FastNodeConfig("node-b", uri), 2);
  ASSERT_TRUE(b.Start().ok());
  Reply r = Post(b.meta_http_port(), "StartWriteCache", R"({"keys": ["k"]})");
  EXPECT_EQ(r.body["leader_endpoint"]["meta_http_port"], 41001) << r.body.dump();
  EXPECT_EQ(r.body["leader_endpoint"]["admin_http_port"], 41002) << r.body.dump();
}

}  // namespace
}  // namespace kvchaos::service
