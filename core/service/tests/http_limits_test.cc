// The node's HTTP ports under hostile clients, as the reliability issue found them on main: slow
// clients starved the workers, a flood left requests unanswered, bodies were buffered whatever their
// size, malformed framing got 200. Each test drives a real NodeServer over loopback with raw
// sockets and asserts what the client sees: an answer (or a refusal naming the limit), never
// silence.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/common/runtime.h"
#include "core/service/node_server.h"
#include "core/service/tests/node_test_util.h"
#include "core/service/tests/raw_http.h"

namespace kvchaos::service {
namespace {

using namespace std::chrono_literals;
using testing::PostRequest;
using testing::RawAnswer;
using testing::RawConnection;

const char* kStorage = R"({"storage": {"type": "posix", "global_unique_name": "nfs",
  "integrity": {"enable_meta_checksum": true, "algo": "crc64_full"}}})";

class HttpLimitsTest : public ::testing::Test {
 protected:
  void Start(NodeConfig c) {
    node_ = std::make_unique<NodeServer>(Runtime::Real(), std::move(c), 1);
    ASSERT_TRUE(node_->Start().ok());
    ASSERT_TRUE(testing::WaitLeader(*node_));
  }
  static NodeConfig Config() { return testing::FastNodeConfig("solo"); }
  int meta() const { return node_->meta_http_port(); }
  int admin() const { return node_->admin_http_port(); }
  std::unique_ptr<NodeServer> node_;
};

TEST_F(HttpLimitsTest, SlowClientsDoNotStarveTheWorkers) {
  NodeConfig c = Config();
  c.http_worker_threads = 2;
  c.http.request_timeout_ms = 120000;  // the slow ones stay open for the whole test
  Start(c);
  // Four slow clients per worker, each sending one header line every 100 ms and never finishing
  // (on main each held a worker for as long as it trickled).
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 8; ++i) {
    slow.push_back(std::make_unique<RawConnection>(meta()));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->Send("POST /api/GetClusterInfo HTTP/1.1\r\n"));
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop) {
      for (auto& s : slow) s->Send("X-Slow: 1\r\n");
      std::this_thread::sleep_for(100ms);
    }
  });
  for (int i = 0; i < 5; ++i) {
    RawConnection fast(meta());
    ASSERT_TRUE(fast.Send(PostRequest("GetClusterInfo", "{}")));
    const RawAnswer a = fast.Read(60s);
    EXPECT_EQ(a.status, 200) << "request " << i << " went unanswered while 8 slow clients trickled: " << a.head;
  }
  stop = true;
  trickle.join();
  for (auto& s : slow) EXPECT_EQ(s->Read(0ms).status, 0) << "a slow client's unfinished request was answered";
}

TEST_F(HttpLimitsTest, ARequestThatArrivesTooSlowlyGets408AndItsConnectionCloses) {
  NodeConfig c = Config();
  c.http.request_timeout_ms = 200;
  Start(c);
  RawConnection slow(meta());
  ASSERT_TRUE(slow.Send("POST /api/GetClusterInfo HTTP/1.1\r\nX-Slow: 1\r\n"));
  const RawAnswer a = slow.Read(30s);
  EXPECT_EQ(a.status, 408) << a.head;
  EXPECT_EQ(a.body.value("code", ""), "Timeout") << a.body.dump();
  EXPECT_NE(a.body.value("message", "").find("kvcm.service.http_request_timeout_ms"), std::string::npos) << a.body.dump();
  EXPECT_TRUE(slow.WaitClosed()) << "the connection must be closed after a 408";
  RawConnection idle(meta());  // connects, never sends: closed without an answer
  EXPECT_TRUE(idle.WaitClosed()) << "an idle connection must not hold a slot for ever";
}

TEST_F(HttpLimitsTest, AFloodIsAnsweredEveryRequestOkOr503) {
  NodeConfig c = Config();
  c.http_worker_threads = 2;
  c.http.max_connections = 32;
  c.http.max_queued_requests = 4;
  Start(c);
  constexpr int kClients = 200;
  std::vector<std::unique_ptr<RawConnection>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<RawConnection>(meta()));
    ASSERT_TRUE(clients.back()->connected()) << "client " << i;
  }
  for (auto& client : clients) client->Send(PostRequest("GetClusterInfo", "{}"));
  int ok = 0, refused = 0, silent = 0;
  std::string refusal;
  for (auto& client : clients) {
    const RawAnswer a = client->Read(60s);
    if (a.status == 200) ++ok;
    else if (a.status == 503) {
      ++refused;
      refusal = a.body.value("message", "");
    } else {
      ++silent;
    }
  }
  EXPECT_EQ(silent, 0) << "every request of a flood must be answered (200, or 503 when the node is full)";
  EXPECT_GE(ok, 1);
  EXPECT_GE(refused, 1) << "200 connections against max_connections 32 must be refused in part";
  EXPECT_EQ(ok + refused, kClients);
  EXPECT_NE(refusal.find("kvcm.service.http_max_"), std::string::npos) << refusal;
  clients.clear();
  RawConnection after(meta());
  ASSERT_TRUE(after.Send(PostRequest("GetClusterInfo", "{}")));
  EXPECT_EQ(after.Read(60s).status, 200) << "the node must serve again once the flood is gone";
}

TEST_F(HttpLimitsTest, AnOversizedBodyIsRefusedFromItsContentLengthBeforeAnyOfItIsRead) {
  NodeConfig c = Config();
  c.http.max_body_bytes = 1 << 20;
  Start(c);
  RawConnection client(meta());
  // Headers announcing 100 MB, and not one byte of the body: the answer can only come from the
  // Content-Length, so nothing of the body was buffered.
  ASSERT_TRUE(client.Send("POST /api/StartWriteCache HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n"));
  const RawAnswer a = client.Read(30s);
  EXPECT_EQ(a.status, 413) << a.head;
  EXPECT_NE(a.body.value("message", "").find("100000000 bytes is larger than 1048576 (kvcm.service.http_max_body_bytes)"),
            std::string::npos)
      << a.body.dump();
  EXPECT_TRUE(a.closed);
  EXPECT_EQ(node_->http().meta().stats().served, 0u) << "the oversized request reached a worker";
}

TEST_F(HttpLimitsTest, MoreKeysThanTheLimitAre400NamingTheFieldAndCreateNothing) {
  NodeConfig c = Config();
  c.http.max_keys_per_call = 100;
  Start(c);
  ASSERT_EQ(testing::Post(meta(), "AddStorage", kStorage).status, 200);
  nlohmann::json keys = nlohmann::json::array();
  for (int i = 0; i < 101; ++i) keys.push_back("k" + std::to_string(i));
  testing::Reply r = testing::Post(meta(), "StartWriteCache", nlohmann::json{{"keys", keys}}.dump());
  EXPECT_EQ(r.status, 400) << r.body.dump();
  EXPECT_EQ(r.body.value("message", ""), "keys: more than 100 entries (kvcm.service.http_max_keys_per_call)")
      << r.body.dump();
  testing::Reply loc = testing::Post(meta(), "GetCacheLocation", R"({"keys": ["k0"]})");
  ASSERT_EQ(loc.status, 200) << loc.body.dump();
  EXPECT_TRUE(loc.body["locations"][0].is_null()) << "a refused call created a location: " << loc.body.dump();
  keys.erase(keys.size() - 1);
  EXPECT_EQ(testing::Post(meta(), "StartWriteCache", nlohmann::json{{"keys", keys}}.dump()).status, 200)
      << "exactly the limit is accepted";
}

struct BadFraming {
  const char* what;
  std::string request;
  int status;
  const char* reason;  // part of the message
};

TEST_F(HttpLimitsTest, MalformedFramingIsRefusedNamingTheProblem) {
  NodeConfig c = Config();
  c.http.max_headers = 8;
  c.http.max_header_bytes = 2048;
  Start(c);
  const std::string head = "POST /api/GetClusterInfo HTTP/1.1\r\nHost: x\r\n";
  std::string many_headers = head;
  for (int i = 0; i < 9; ++i) many_headers += "X-" + std::to_string(i) + ": 1\r\n";
  const std::vector<BadFraming> cases = {
      {"non-numeric length", head + "Content-Length: abc\r\n\r\n", 400, "Content-Length 'abc' is not a number"},
      {"negative length", head + "Content-Length: -1\r\n\r\n{}", 400, "is not a number"},
      {"length and encoding", head + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}", 400,
       "Content-Length and Transfer-Encoding together"},
      {"length twice", head + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400, "Content-Length is given twice"},
      {"chunked", head + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 411, "Transfer-Encoding is not accepted"},
      {"bare LF", "POST /api/GetClusterInfo HTTP/1.1\nHost: x\n\n", 400, "bare LF"},
      {"no colon", head + "Broken header\r\n\r\n", 400, "has no ':'"},
      {"space before colon", head + "Content-Length : 2\r\n\r\n{}", 400, "is not a token"},
      {"folded", head + "X-A: 1\r\n folded\r\n\r\n", 400, "folded"},
      {"version", "POST /api/GetClusterInfo HTTP/2.0\r\n\r\n", 505, "HTTP version 'HTTP/2.0' is not supported"},
      {"too many headers", many_headers + "\r\n", 431, "more than 8 header lines (kvcm.service.http_max_headers)"},
      {"header too long", head + "X-Long: " + std::string(4096, 'a') + "\r\n\r\n", 431,
       "longer than 2048 bytes (kvcm.service.http_max_header_bytes)"},
      {"expectation", head + "Expect: magic\r\n\r\n", 417, "Expect 'magic' is not supported"},
  };
  for (const BadFraming& bad : cases) {
    RawConnection client(meta());
    ASSERT_TRUE(client.Send(bad.request)) << bad.what;
    const RawAnswer a = client.Read(30s);
    EXPECT_EQ(a.status, bad.status) << bad.what << ": " << a.head;
    EXPECT_NE(a.body.value("message", "").find(bad.reason), std::string::npos) << bad.what << ": " << a.body.dump();
    EXPECT_TRUE(a.closed) << bad.what << ": a connection whose framing is broken must be closed";
  }
  EXPECT_EQ(node_->http().meta().stats().served, 0u) << "a malformed request reached a worker";
  EXPECT_EQ(node_->http().meta().stats().refused_framing, cases.size());
}

TEST_F(HttpLimitsTest, KeptAlivePipelinedAndExpectContinueRequestsAreServed) {
  Start(Config());
  RawConnection client(meta());
  ASSERT_TRUE(client.Send(PostRequest("GetClusterInfo", "{}") + PostRequest("GetClusterInfo", "")));
  const RawAnswer first = client.Read(30s);
  const RawAnswer second = client.Read(30s);
  EXPECT_EQ(first.status, 200) << first.head;
  EXPECT_EQ(second.status, 200) << "the pipelined request was lost: " << second.head;
  EXPECT_FALSE(first.closed) << "HTTP/1.1 keeps the connection by default";
  // curl's way with a larger body: the head first, the body after "100 Continue".
  ASSERT_TRUE(client.Send("POST /api/GetClusterInfo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"));
  std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(client.Send("{}"));
  const RawAnswer third = client.Read(30s);
  EXPECT_EQ(third.status, 200) << third.head;
  EXPECT_EQ(third.body.value("self_id", ""), "solo") << third.body.dump();
}

TEST_F(HttpLimitsTest, TheAdminPortWantsItsTokenTheMetaPortDoesNot) {
  NodeConfig c = Config();
  c.admin_token = "0123456789abcdef-admin";
  Start(c);
  RawConnection none(admin());
  ASSERT_TRUE(none.Send(PostRequest("LeaderDemote", "{}")));
  const RawAnswer refused = none.Read(30s);
  EXPECT_EQ(refused.status, 401) << refused.head;
  EXPECT_EQ(refused.body.value("code", ""), "Unauthenticated") << refused.body.dump();
  EXPECT_NE(refused.body.value("message", "").find("kvcm.service.admin_token"), std::string::npos);
  RawConnection wrong(admin());
  // Refused from the headers: the announced body is never sent.
  ASSERT_TRUE(wrong.Send("POST /api/LeaderDemote HTTP/1.1\r\nAuthorization: Bearer guess\r\nContent-Length: 50\r\n\r\n"));
  EXPECT_EQ(wrong.Read(30s).status, 401);
  EXPECT_TRUE(node_->elector().IsLeader()) << "an unauthenticated LeaderDemote demoted the node";
  RawConnection right(admin());
  ASSERT_TRUE(right.Send(PostRequest("GetManagerClusterInfo", "{}", "Authorization: Bearer 0123456789abcdef-admin\r\n")));
  const RawAnswer ok = right.Read(30s);
  EXPECT_EQ(ok.status, 200) << ok.head;
  EXPECT_EQ(ok.body.value("state", ""), "LEADER") << ok.body.dump();
  EXPECT_EQ(testing::Post(meta(), "GetClusterInfo", "{}").status, 200) << "the meta port needs no token";
  EXPECT_EQ(testing::Post(admin(), "GetClusterInfo", "{}").status, 401);
}

TEST(AdminTokenTest, AnAdminPortBeyondLoopbackWithoutATokenIsRefusedAtStart) {
  NodeConfig c = testing::FastNodeConfig("open");
  c.listen_host = "0.0.0.0";
  NodeServer node(Runtime::Real(), c, 1);
  const Status s = node.Start();
  ASSERT_FALSE(s.ok()) << "an unauthenticated admin API on every interface must not start";
  EXPECT_EQ(s.code(), StatusCode::kInvalidConfig) << s.ToString();
  EXPECT_NE(s.message().find("kvcm.service.admin_token: required when the admin API listens beyond loopback"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("'0.0.0.0'"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace kvchaos::service
