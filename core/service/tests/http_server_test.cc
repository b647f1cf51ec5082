// HttpServer on its own, with a handler the test controls: a full worker queue answers 503 at once
// (the loop never waits for a worker), a bearer token is checked from the headers, and Stop joins
// the loop and the workers.
#include "core/service/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/service/tests/raw_http.h"
#include "core/service/tests/recording_runtime.h"

namespace kvchaos::service {
namespace {

using namespace std::chrono_literals;
using testing::PostRequest;
using testing::RawConnection;

std::string Answer200(bool last) {
  const std::string body = R"({"code":"OK"})";
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         (last ? "Connection: close\r\n" : "") + "\r\n" + body;
}

struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int entered = 0;
  void Pass() {
    std::unique_lock<std::mutex> lock(mu);
    ++entered;
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
  }
  void WaitEntered(int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, 30s, [&] { return entered >= n; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
};

// Opens the gate when the test leaves, however it leaves. Declared after the server, so it runs
// before the server's destructor joins the workers: a failed ASSERT must fail the test, not leave
// a worker in Pass() for ever and the whole binary hung in that join.
struct OpenOnExit {
  Gate& gate;
  ~OpenOnExit() { gate.Open(); }
};

TEST(HttpServerTest, AFullWorkerQueueAnswers503AtOnce) {
  Gate gate;
  HttpServerOptions options;
  options.workers = 1;
  options.limits.max_queued_requests = 1;
  HttpServer server(Runtime::Real(), options, [&gate](std::string_view, const std::string&, int, bool last) {
    gate.Pass();
    return Answer200(last);
  });
  OpenOnExit open_on_exit{gate};
  auto port = server.Bind("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  ASSERT_TRUE(server.Serve().ok());
  RawConnection running(*port), queued(*port), refused(*port);
  ASSERT_TRUE(running.Send(PostRequest("A", "{}")));
  gate.WaitEntered(1);  // the only worker is busy with it
  ASSERT_TRUE(queued.Send(PostRequest("B", "{}")));
  for (int i = 0; i < 3000 && server.stats().handed < 2; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(server.stats().handed, 2u) << "the second request never reached the queue";
  ASSERT_TRUE(refused.Send(PostRequest("C", "{}")));
  const testing::RawAnswer busy = refused.Read(30s);
  EXPECT_EQ(busy.status, 503) << busy.head;
  EXPECT_NE(busy.body.value("message", "").find("kvcm.service.http_max_queued_requests"), std::string::npos)
      << busy.body.dump();
  gate.Open();
  EXPECT_EQ(running.Read(30s).status, 200);
  EXPECT_EQ(queued.Read(30s).status, 200) << "the queued request must still be served";
  EXPECT_EQ(server.stats().refused_busy, 1u);
  EXPECT_EQ(server.stats().served, 2u);
  server.Stop();
}

TEST(HttpServerTest, ABearerTokenIsCheckedFromTheHeaders) {
  std::atomic<int> handled{0};
  HttpServerOptions options;
  options.name = "adm";
  options.what = "kvcm.service.admin_http_port";
  options.bearer_token = "0123456789abcdef";
  HttpServer server(Runtime::Real(), options, [&handled](std::string_view, const std::string&, int, bool last) {
    ++handled;
    return Answer200(last);
  });
  auto port = server.Bind("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  ASSERT_TRUE(server.Serve().ok());
  for (const char* header : {"", "Authorization: Bearer 0123456789abcdeX\r\n", "Authorization: Basic 0123456789abcdef\r\n",
                             "Authorization: Bearer 0123456789abcdef0\r\n"}) {
    RawConnection c(*port);
    ASSERT_TRUE(c.Send(PostRequest("LeaderDemote", "{}", header)));
    EXPECT_EQ(c.Read(30s).status, 401) << "credentials '" << header << "' were accepted";
  }
  RawConnection ok(*port);
  ASSERT_TRUE(ok.Send(PostRequest("LeaderDemote", "{}", "Authorization: Bearer 0123456789abcdef\r\n")));
  EXPECT_EQ(ok.Read(30s).status, 200);
  EXPECT_EQ(handled.load(), 1) << "only the authenticated request may reach the handler";
  EXPECT_EQ(server.stats().refused_unauthorized, 4u);
  server.Stop();
}

TEST(HttpServerTest, StopJoinsTheLoopAndTheWorkers) {
  testing::RecordingRuntime rt;
  HttpServerOptions options;
  options.workers = 3;
  HttpServer server(rt, options, [](std::string_view, const std::string&, int, bool last) { return Answer200(last); });
  auto port = server.Bind("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  EXPECT_TRUE(server.loopback_only());
  EXPECT_EQ(server.address(), "127.0.0.1:" + std::to_string(*port));
  ASSERT_TRUE(server.Serve().ok());
  RawConnection c(*port);
  ASSERT_TRUE(c.Send(PostRequest("A", "{}")));
  EXPECT_EQ(c.Read(30s).status, 200);
  EXPECT_EQ(rt.Unjoined("kvc_hw_meta_").size(), 3u);
  EXPECT_EQ(rt.Unjoined("kvc_http_meta").size(), 1u);
  server.Stop();
  EXPECT_TRUE(rt.Unjoined("kvc_").empty()) << "Stop must join every thread it started";
}

}  // namespace
}  // namespace kvchaos::service
