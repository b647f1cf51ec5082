// RuntimeTaskQueue: jobs run on named workers spawned through the runtime, Shutdown drains the queue
// and joins every worker, a full queue refuses at once (its caller, the port's event loop, never
// blocks), and a node's two HTTP ports use such workers and join them on Stop().
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

TEST(RuntimeTaskQueueTest, JobsRunOnNamedRuntimeWorkers) {
  RecordingRuntime rt;
  RuntimeTaskQueue queue(rt, "kvc_hw_test_", 2, 8);
  Mutex mu(rt);
  CondVar cv(rt);
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(queue.TryEnqueue([&] {
      MutexLock lock(mu);
      names.push_back(CurrentThreadName());
      cv.NotifyAll();
    }));
  }
  {
    MutexLock lock(mu);
    while (names.size() < 6) cv.Wait(mu);
    for (const std::string& name : names) {
      EXPECT_EQ(name.rfind("kvc_hw_test_", 0), 0u) << "job ran on thread '" << name << "', not on a runtime worker";
    }
  }
  EXPECT_TRUE(Contains(rt.Spawned(), "kvc_hw_test_0")) << "workers must be spawned through the runtime";
  EXPECT_TRUE(Contains(rt.Spawned(), "kvc_hw_test_1"));
  EXPECT_EQ(rt.Unjoined("kvc_hw_test_").size(), 2u);
  queue.Shutdown();
  EXPECT_TRUE(rt.Unjoined("kvc_hw_test_").empty()) << "Shutdown must join every worker";
}

TEST(RuntimeTaskQueueTest, ShutdownRunsWhatIsQueuedThenJoins) {
  RecordingRuntime rt;
  std::atomic<int> ran{0};
  {
    RuntimeTaskQueue queue(rt, "kvc_hw_drain_", 1, 16);
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(queue.TryEnqueue([&ran] { ran.fetch_add(1); }));
    queue.Shutdown();
    EXPECT_EQ(ran.load(), 10) << "Shutdown must not drop queued requests";
    EXPECT_TRUE(rt.Unjoined("kvc_hw_drain_").empty());
    EXPECT_FALSE(queue.TryEnqueue([] {})) << "nothing is taken after Shutdown";
    queue.Shutdown();  // idempotent (the destructor calls it again)
  }
}

TEST(RuntimeTaskQueueTest, AFullQueueRefusesAtOnceInsteadOfBlockingTheCaller) {
  RecordingRuntime rt;
  Mutex mu(rt);
  CondVar cv(rt);
  bool release = false;
  bool started = false;
  RuntimeTaskQueue queue(rt, "kvc_hw_full_", 1, 2);
  ASSERT_TRUE(queue.TryEnqueue([&] {  // taken by the only worker, which then blocks
    MutexLock lock(mu);
    started = true;
    cv.NotifyAll();
    while (!release) cv.Wait(mu);
  }));
  {
    MutexLock lock(mu);
    while (!started) cv.Wait(mu);
  }
  std::atomic<int> ran{0};
  EXPECT_TRUE(queue.TryEnqueue([&] { ++ran; }));
  EXPECT_TRUE(queue.TryEnqueue([&] { ++ran; }));
  EXPECT_FALSE(queue.TryEnqueue([&] { ++ran; })) << "a third job past max_queued 2 must be refused";
  {
    MutexLock lock(mu);
    release = true;
    cv.NotifyAll();
  }
  queue.Shutdown();
  EXPECT_EQ(ran.load(), 2) << "the queued jobs run, the refused one never";
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
