// WorkPool on the real runtime: every job runs once and Wait returns only after all of its batch
// finished; a pool without threads runs everything on the waiter; a batch never waits behind
// another batch's job; past its queue bound a job runs on the thread that adds it.
#include "core/common/work_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace kvchaos {
namespace {

// A job that blocks its thread until the test opens the gate, and says when it started.
class Gate {
 public:
  void Block() {
    std::unique_lock<std::mutex> lock(mu_);
    started_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
  }
  void AwaitStarted() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return started_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;
  bool open_ = false;
};

TEST(WorkPoolTest, EveryJobRunsOnceBeforeWaitReturns) {
  WorkPool pool(Runtime::Real(), 3, "test_pool");
  EXPECT_EQ(pool.threads(), 3u);
  std::vector<std::atomic<int>> runs(200);
  WorkPool::Batch batch(pool);
  for (auto& r : runs) batch.Add([&r] { r.fetch_add(1); });
  batch.Wait();
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "job " << i;
}

TEST(WorkPoolTest, WithoutThreadsTheWaiterRunsEveryJob) {
  WorkPool pool(Runtime::Real(), 0, "test_pool");
  const std::thread::id caller = std::this_thread::get_id();
  int on_caller = 0;
  {
    WorkPool::Batch batch(pool);
    for (int i = 0; i < 10; ++i) batch.Add([&] { on_caller += std::this_thread::get_id() == caller; });
  }  // the destructor waits
  EXPECT_EQ(on_caller, 10) << "no pool thread exists: the caller runs them all";
}

TEST(WorkPoolTest, ABatchDoesNotWaitBehindAnotherBatchsJob) {
  WorkPool pool(Runtime::Real(), 1, "test_pool");
  Gate gate;
  WorkPool::Batch slow(pool);
  slow.Add([&gate] { gate.Block(); });
  gate.AwaitStarted();  // the pool's only thread is held by the other batch
  std::atomic<int> done{0};
  {
    WorkPool::Batch fast(pool);
    for (int i = 0; i < 5; ++i) fast.Add([&done] { done.fetch_add(1); });
    fast.Wait();  // must not need the held thread: runs its own jobs
  }
  EXPECT_EQ(done.load(), 5);
  gate.Open();
  slow.Wait();
}

TEST(WorkPoolTest, PastTheQueueBoundAJobRunsOnTheAddingThread) {
  WorkPool pool(Runtime::Real(), 1, "test_pool", /*max_queued=*/2);
  Gate gate;
  WorkPool::Batch batch(pool);
  batch.Add([&gate] { gate.Block(); });
  gate.AwaitStarted();  // out of the queue, holding the thread
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> ran_at_add{0};
  for (int i = 0; i < 5; ++i) {
    batch.Add([&] { ran_at_add += std::this_thread::get_id() == caller; });
  }
  EXPECT_EQ(ran_at_add.load(), 3) << "2 jobs fit the queue, the other 3 ran at once on the caller";
  gate.Open();
  batch.Wait();
}

}  // namespace
}  // namespace kvchaos
