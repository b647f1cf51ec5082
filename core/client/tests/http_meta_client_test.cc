// HttpMetaClient and LeaderDiscovery against real MetaNodes on loopback: the data plane through
// HTTP (IOV layouts included), rediscovery after the leader steps down, bounded retries when
// nobody answers, and commits to a node from before IOV layouts (which refuses the field).
#include <gtest/gtest.h>
#include <httplib.h>

#include <mutex>
#include <thread>

#include "core/client/http_meta_client.h"
#include "core/common/runtime.h"
#include "core/common/thread_util.h"
#include "core/service/node_server.h"
#include "core/service/tests/node_test_util.h"
#include "testing/free_port.h"
#include "testing/temp_dir.h"

namespace kvchaos::client {
namespace {

using service::testing::WaitLeader;

service::NodeConfig Config(const std::string& uri, const std::string& id) {
  return service::testing::FastNodeConfig(id, uri);
}

meta::StorageConfig Storage(const std::string& name) {
  meta::StorageConfig c;
  c.type = "posix";
  c.global_unique_name = name;
  c.integrity.enable_meta_checksum = true;
  c.integrity.algo = integrity::ChecksumAlgo::kCrc64Full;
  return c;
}

std::string Admin(service::NodeServer& node) { return "127.0.0.1:" + std::to_string(node.admin_http_port()); }

TEST(HttpMetaClientTest, DataPlaneRoundTripThroughTheLeader) {
  service::NodeServer node(Runtime::Real(), Config("", "solo"), 1);
  ASSERT_TRUE(node.Start().ok());
  ASSERT_TRUE(WaitLeader(node));
  HttpMetaClient client(Runtime::Real(), {.bootstrap = {Admin(node)}});
  Status added = client.AddStorage(Storage("nfs"));
  ASSERT_TRUE(added.ok()) << added.ToString();
  auto config = client.GetStorageConfig("nfs");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(*config, Storage("nfs"));

  std::vector<std::string> keys = {"a", "b"};
  auto session = client.StartWrite(keys, "nfs");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_EQ(session->locations.size(), 2u);
  EXPECT_EQ(session->to_write, (std::vector<uint8_t>{1, 1}));
  std::vector<int64_t> sums = {7, 0};
  std::vector<uint8_t> present = {1, 1};
  // Key a's layout goes over the wire; b's is unknown (sent as null).
  const std::vector<meta::IovLayout> layouts{*meta::IovLayout::FromSizes(std::vector<uint64_t>(64, 65536)),
                                             meta::IovLayout()};
  // Blocks written with inline headers: the node records the version with each location.
  ASSERT_TRUE(client.FinishWrite(session->session_id, keys, sums, present, layouts, 1).ok());
  auto locations = client.GetLocations(keys);
  ASSERT_TRUE(locations.ok()) << locations.status().ToString();
  ASSERT_TRUE((*locations)[0] && (*locations)[1]) << "both keys were committed";
  EXPECT_EQ((*locations)[0]->checksum, 7);
  EXPECT_TRUE((*locations)[1]->checksum_present) << "0 is a real checksum when flagged present";
  EXPECT_EQ((*locations)[0]->iov_layout, layouts[0]) << (*locations)[0]->iov_layout.ToString();
  EXPECT_FALSE((*locations)[1]->iov_layout.known()) << (*locations)[1]->iov_layout.ToString();
  EXPECT_EQ((*locations)[0]->inline_header_version, 1);
  // The answer names the node and the term that served it (histories record both).
  auto read = client.ReadLocations(keys);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->locations, *locations);
  EXPECT_EQ(read->served_by, "solo") << "the read must name the node that answered it";
  EXPECT_EQ(read->term, session->fencing_token) << "the read must name the term it was served under";
  EXPECT_GT(read->term, 0u);
  ASSERT_TRUE(client.Remove(keys).ok());
  locations = client.GetLocations(keys);
  ASSERT_TRUE(locations.ok());
  EXPECT_FALSE((*locations)[0].has_value()) << "removed key still has a location";

  auto missing = client.GetStorageConfig("nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();

  ASSERT_TRUE(client.AddStorage(Storage("alpha")).ok());
  auto listed = client.ListStorages();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0], Storage("alpha")) << "sorted by name";
  EXPECT_EQ((*listed)[1], Storage("nfs"));
}

// A leading node of the version before IOV layouts, as far as FinishWriteCache goes: strict
// parsing refuses the unknown field with 400 before changing anything.
class OldNode {
 public:
  OldNode() {
    server_.Post("/api/GetClusterInfo", [this](const httplib::Request&, httplib::Response& res) {
      nlohmann::json info{{"code", "OK"}, {"leader_endpoint", {{"host", "127.0.0.1"}, {"meta_http_port", port_}}}};
      res.set_content(info.dump(), "application/json");
    });
    // Before reads named their node and term: locations only.
    server_.Post("/api/GetCacheLocation", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"code": "OK", "locations": [null]})", "application/json");
    });
    // Before request ids.
    server_.Post("/api/StartWriteCache", [this](const httplib::Request& req, httplib::Response& res) {
      nlohmann::json body = Record(req);
      if (body.contains("request_id")) {
        res.status = 400;
        res.set_content(R"({"code": "InvalidArgument", "message": "request_id: unknown field"})", "application/json");
        return;
      }
      nlohmann::json session{{"session_id", "ws-1-1"}, {"fencing_token", 1}, {"storage", "nfs"},
                             {"keys", body["keys"]}, {"locations", nlohmann::json::array()},
                             {"to_write", nlohmann::json::array()}};
      res.set_content(nlohmann::json{{"code", "OK"}, {"session", session}}.dump(), "application/json");
    });
    server_.Post("/api/FinishWriteCache", [this](const httplib::Request& req, httplib::Response& res) {
      nlohmann::json body = Record(req);
      if (body.contains("iov_layouts")) {
        res.status = 400;
        res.set_content(R"({"code": "InvalidArgument", "message": "iov_layouts: unknown field"})", "application/json");
      } else if (body.contains("inline_header_version")) {
        res.status = 400;
        res.set_content(R"({"code": "InvalidArgument", "message": "inline_header_version: unknown field"})",
                        "application/json");
      } else {
        res.set_content(R"({"code": "OK"})", "application/json");
      }
    });
    // Listening from here on: requests queue until the loop below accepts them.
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] {
      SetCurrentThreadName("old_node");
      server_.listen_after_bind();
    });
  }
  ~OldNode() {
    server_.stop();
    thread_.join();
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  std::vector<nlohmann::json> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  // Keeps every request body the node was sent, for the test to inspect.
  nlohmann::json Record(const httplib::Request& req) {
    nlohmann::json body = nlohmann::json::parse(req.body);
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(body);
    return body;
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<nlohmann::json> requests_;
};

TEST(HttpMetaClientTest, CommitsWithoutLayoutsToANodeThatDoesNotKnowThem) {
  OldNode old;
  ASSERT_GT(old.endpoint().size(), std::string("127.0.0.1:").size());
  HttpMetaClient client(Runtime::Real(), {.bootstrap = {old.endpoint()}});
  const std::vector<std::string> keys{"a"};
  const std::vector<int64_t> sums{7};
  const std::vector<meta::IovLayout> layouts{*meta::IovLayout::FromSizes(std::vector<uint64_t>{4096})};
  Status s = client.FinishWrite("ws-1", keys, sums, {}, layouts);
  ASSERT_TRUE(s.ok()) << "an older node must still get the commit: " << s.ToString();
  const auto requests = old.requests();
  ASSERT_EQ(requests.size(), 2u) << "one refused try with layouts, one commit without";
  EXPECT_TRUE(requests[0].contains("iov_layouts"));
  EXPECT_FALSE(requests[1].contains("iov_layouts"));
  EXPECT_EQ(requests[1]["checksums"], nlohmann::json::array({7})) << "the checksums still go";
  // Without layouts nothing is retried: one request.
  ASSERT_TRUE(client.FinishWrite("ws-2", keys, sums, {}).ok());
  EXPECT_EQ(old.requests().size(), 3u);
}

TEST(HttpMetaClientTest, StartsWithoutARequestIdOnANodeThatDoesNotKnowIt) {
  OldNode old;
  HttpMetaClient client(Runtime::Real(), {.bootstrap = {old.endpoint()}});
  const std::vector<std::string> keys{"a"};
  (void)client.StartWrite(keys, "nfs");
  const auto requests = old.requests();
  ASSERT_EQ(requests.size(), 2u) << "one refused try with the request id, one without";
  EXPECT_TRUE(requests[0].contains("request_id"));
  EXPECT_FALSE(requests[1].contains("request_id"));
  EXPECT_EQ(requests[1]["keys"], nlohmann::json::array({"a"})) << "the keys still go";
}

// What a retried StartWriteCache looks like to the leader when the first attempt arrives late: the
// same body twice. The node must answer both with one session, so the client's commit holds.
TEST(HttpMetaClientTest, AStartWriteDeliveredTwiceGetsOneSession) {
  service::NodeServer node(Runtime::Real(), Config("", "solo"), 1);
  ASSERT_TRUE(node.Start().ok());
  ASSERT_TRUE(WaitLeader(node));
  HttpMetaClient client(Runtime::Real(), {.bootstrap = {Admin(node)}});
  ASSERT_TRUE(client.AddStorage(Storage("nfs")).ok());
  const std::string meta = "127.0.0.1:" + std::to_string(node.meta_http_port());
  const nlohmann::json body{{"keys", {"k"}}, {"storage", "nfs"}, {"request_id", "c-1"}};
  auto first = PostJson(meta, "StartWriteCache", body, 2000);
  auto copy = PostJson(meta, "StartWriteCache", body, 2000);
  ASSERT_TRUE(first.ok() && copy.ok());
  ASSERT_TRUE(first->contains("session") && copy->contains("session")) << first->dump() << " / " << copy->dump();
  const std::string session = (*first)["session"]["session_id"];
  EXPECT_EQ((*copy)["session"]["session_id"], session) << "the copy took the write over";
  const std::vector<std::string> keys{"k"};
  Status done = client.FinishWrite(session, keys, {}, {});
  EXPECT_TRUE(done.ok()) << done.ToString();
}

TEST(HttpMetaClientTest, AReadFromANodeThatDoesNotNameItsNodeAndTermSaysUnknown) {
  OldNode old;
  HttpMetaClient client(Runtime::Real(), {.bootstrap = {old.endpoint()}});
  const std::vector<std::string> keys{"a"};
  auto read = client.ReadLocations(keys);
  ASSERT_TRUE(read.ok()) << "an older node's read must still be answered: " << read.status().ToString();
  ASSERT_EQ(read->locations.size(), 1u);
  EXPECT_FALSE(read->locations[0].has_value());
  EXPECT_EQ(read->served_by, "") << "no field: unknown, not a made-up node";
  EXPECT_EQ(read->term, 0u);
}

// Blocks with inline headers committed to an older node: recorded without the flag, which reads
// their data right (the header sits after it); the commit is not lost.
TEST(HttpMetaClientTest, CommitsWithoutTheHeaderVersionToANodeThatDoesNotKnowIt) {
  OldNode old;
  HttpMetaClient client(Runtime::Real(), {.bootstrap = {old.endpoint()}});
  const std::vector<std::string> keys{"a"};
  const std::vector<int64_t> sums{7};
  Status s = client.FinishWrite("ws-1", keys, sums, {}, {}, 1);
  ASSERT_TRUE(s.ok()) << "an older node must still get the commit: " << s.ToString();
  const auto requests = old.requests();
  ASSERT_EQ(requests.size(), 2u) << "one refused try with the version, one commit without";
  EXPECT_EQ(requests[0]["inline_header_version"], 1);
  EXPECT_FALSE(requests[1].contains("inline_header_version"));
  EXPECT_EQ(requests[1]["checksums"], nlohmann::json::array({7}));
}

TEST(HttpMetaClientTest, FollowsTheLeaderAfterItStepsDown) {
  kvchaos::testing::TempDir dir("kvchaos-client");
  std::string uri = "file://" + dir.path().string();
  service::NodeServer a(Runtime::Real(), Config(uri, "node-a"), 1);
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(WaitLeader(a));
  service::NodeServer b(Runtime::Real(), Config(uri, "node-b"), 2);
  ASSERT_TRUE(b.Start().ok());

  // Bootstrap through the follower: discovery must still find node-a.
  HttpMetaClient client(Runtime::Real(), {.bootstrap = {Admin(b), Admin(a)}});
  Status added = client.AddStorage(Storage("nfs"));
  ASSERT_TRUE(added.ok()) << added.ToString();
  EXPECT_EQ(*client.discovery().Leader(), "127.0.0.1:" + std::to_string(a.meta_http_port()));

  ASSERT_TRUE(a.node().Demote(std::chrono::seconds(60)).ok());
  ASSERT_TRUE(WaitLeader(b)) << "node-b should take over once node-a released the lock";
  // node-b has its own (empty) indexer here: AddStorage succeeding proves the call reached it.
  Status s = client.AddStorage(Storage("nfs2"));
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(*client.discovery().Leader(), "127.0.0.1:" + std::to_string(b.meta_http_port()));
  auto on_b = b.node().GetStorageConfig("nfs2");
  EXPECT_TRUE(on_b.ok()) << "the retried call must have landed on the new leader: " << on_b.status().ToString();
}

TEST(HttpMetaClientTest, GivesUpAfterBoundedRetriesWhenNobodyAnswers) {
  int port = kvchaos::testing::PickFreeLoopbackPort();
  HttpMetaClient client(Runtime::Real(), {.bootstrap = {"127.0.0.1:" + std::to_string(port)},
                                          .max_attempts = 3,
                                          .initial_backoff_ms = 1,
                                          .max_backoff_ms = 2,
                                          .request_timeout_ms = 200});
  std::vector<std::string> keys = {"a"};
  auto r = client.GetLocations(keys);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_NE(r.status().message().find("after 3 attempts"), std::string::npos) << r.status().ToString();
}

TEST(LeaderDiscoveryTest, BadEndpointsAreNamed) {
  std::string host;
  int port = 0;
  EXPECT_FALSE(ParseHostPort("localhost", &host, &port).ok());
  Status s = ParseHostPort("h:99999", &host, &port);
  EXPECT_NE(s.message().find("h:99999"), std::string::npos) << s.ToString();
  ASSERT_TRUE(ParseHostPort("10.0.0.1:6382", &host, &port).ok());
  EXPECT_EQ(host, "10.0.0.1");
  EXPECT_EQ(port, 6382);
}

}  // namespace
}  // namespace kvchaos::client
