// RuntimeTaskQueue: httplib connections are served by named workers spawned through the runtime,
// shutdown drains the queue and joins every worker, a full queue holds the accept thread back, and
// a MetaNode's two HTTP servers use such workers and join them on Stop().
#include "core/service/runtime_task_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "core/common/thread_util.h"
#include "core/service/node_server.h"
#include "core/service/tests/node_test_util.h"
#include "core/service/tests/recording_runtime.h"

namespace kvchaos::service {
namespace {

using testing::RecordingRuntime;

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(RuntimeTaskQueueTest, HttplibRequestsAreServedByNamedRuntimeWorkers) {
  RecordingRuntime rt;
  httplib::Server server;
  server.new_task_queue = RuntimeTaskQueue::Factory(rt, "kvc_hw_test_", 2, 8);
  server.Get("/who", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(CurrentThreadName(), "text/plain");
  });
  int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  Thread listener = rt.Spawn("kvc_test_accept", [&] { server.listen_after_bind(); });
  while (!server.is_running()) rt.SleepFor(std::chrono::milliseconds(1));
  for (int i = 0; i < 6; ++i) {
    httplib::Client client("127.0.0.1", port);
    auto res = client.Get("/who");
    ASSERT_TRUE(res) << "request " << i << " failed: " << httplib::to_string(res.error());
    EXPECT_EQ(res->body.rfind("kvc_hw_test_", 0), 0u) << "request served by thread '" << res->body
                                                      << "', not by a runtime worker";
  }
  EXPECT_TRUE(Contains(rt.Spawned(), "kvc_hw_test_0")) << "workers must be spawned through the runtime";
  EXPECT_TRUE(Contains(rt.Spawned(), "kvc_hw_test_1"));
  EXPECT_EQ(rt.Unjoined("kvc_hw_test_").size(), 2u) << "both workers run while the server serves";
  server.stop();
  listener.Join();
  EXPECT_TRUE(rt.Unjoined("kvc_hw_test_").empty()) << "stopping the server must join every worker";
}

TEST(RuntimeTaskQueueTest, ShutdownRunsWhatIsQueuedThenJoins) {
  RecordingRuntime rt;
  std::atomic<int> ran{0};
  {
    RuntimeTaskQueue queue(rt, "kvc_hw_drain_", 1, 16);
    for (int i = 0; i < 10; ++i) queue.enqueue([&ran] { ran.fetch_add(1); });
    queue.shutdown();
    EXPECT_EQ(ran.load(), 10) << "shutdown must not drop queued connections";
    EXPECT_TRUE(rt.Unjoined("kvc_hw_drain_").empty());
    queue.shutdown();  // idempotent (httplib calls it, then the destructor does)
  }
}

TEST(RuntimeTaskQueueTest, AFullQueueHoldsTheAcceptThreadBack) {
  RecordingRuntime rt;
  Mutex mu(rt);
  CondVar cv(rt);
  bool release = false;
  RuntimeTaskQueue queue(rt, "kvc_hw_full_", 1, 1);
  auto blocker = [&] {
    MutexLock lock(mu);
    cv.Wait(mu, [&]() NO_THREAD_SAFETY_ANALYSIS { return release; });  // runs with mu held
  };
  queue.enqueue(blocker);  // taken by the only worker, which then blocks
  std::atomic<int> returned{0};
  Thread producer = rt.Spawn("kvc_test_prod", [&] {
    queue.enqueue([] {});  // fills the one queue slot (or is taken by then)
    queue.enqueue([] {});
    queue.enqueue([] {});
    returned = 1;
  });
  rt.SleepFor(std::chrono::milliseconds(100));
  EXPECT_EQ(returned.load(), 0) << "enqueue returned although the worker is busy and the queue is full";
  {
    MutexLock lock(mu);
    release = true;
    cv.NotifyAll();
  }
  producer.Join();
  EXPECT_EQ(returned.load(), 1);
  queue.shutdown();
}

TEST(RuntimeTaskQueueTest, MetaNodeServesOnRuntimeWorkersAndStopJoinsThem) {
  RecordingRuntime rt;
  NodeConfig c = testing::FastNodeConfig("solo");
  c.http_worker_threads = 3;
  NodeServer node(rt, c, 1);
  ASSERT_TRUE(node.Start().ok());
  httplib::Client client("127.0.0.1", node.admin_http_port());
  auto res = client.Post("/api/GetClusterInfo", "{}", "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(rt.Unjoined("kvc_hw_meta_").size(), 3u) << "kvcm.service.http_worker_threads workers per port";
  EXPECT_EQ(rt.Unjoined("kvc_hw_adm_").size(), 3u);
  EXPECT_TRUE(Contains(rt.Spawned(), "kvc_http_meta")) << "accept loops run on runtime threads too";
  node.Stop();
  EXPECT_TRUE(rt.Unjoined("kvc_hw_").empty()) << "Stop() must join every HTTP worker";
  EXPECT_TRUE(rt.Unjoined("kvc_").empty()) << "Stop() must join every thread the node started";
}

}  // namespace
}  // namespace kvchaos::service
