// WorkPool: a fixed set of Runtime threads that run short jobs for callers who wait for their own
// (TransferClient's checksums, computed while the store's I/O is in flight). A caller groups its
// jobs in a Batch; Batch::Wait runs the batch's still-queued jobs on the calling thread while the
// pool's threads run others, so a pool of 0 threads runs everything on the caller, a batch never
// waits behind another batch's queued jobs, and callers never wait for each other.
//
// Bounded (TigerBeetle style): at most `max_queued` jobs wait in the queue; a job added past that
// runs at once on the adding thread. Threads, locks and waits go through kvchaos::Runtime, so the
// simulator runs the pool on its simulated threads (DESIGN.md, determinism contract). Jobs must
// not throw, and must not wait for a Batch of the same pool (a job holds a thread while it runs).
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/thread_annotations.h"

namespace kvchaos {

class WorkPool {
 public:
  // `threads` may be 0 (every job runs on its Batch's waiter). Thread names: `thread_name`.
  WorkPool(Runtime& runtime, size_t threads, std::string thread_name, size_t max_queued = 1024);
  // Finishes the queued jobs, then joins the threads. Every Batch must be gone first.
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  size_t threads() const { return threads_.size(); }

  // The jobs of one call. Wait (also run by the destructor, so a job never outlives what it
  // refers to) returns once every job added so far has finished.
  class Batch {
   public:
    explicit Batch(WorkPool& pool) : pool_(pool) {}
    ~Batch() { Wait(); }
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

    void Add(std::function<void()> job);
    void Wait();

   private:
    friend class WorkPool;
    WorkPool& pool_;
    size_t pending_ GUARDED_BY(pool_.mu_) = 0;  // added and not finished
  };

 private:
  struct Job {
    Batch* batch;
    std::function<void()> fn;
  };
  void WorkerLoop();
  // Marks one job of `batch` finished; wakes its waiter when it was the last.
  void Finished(Batch& batch) REQUIRES(mu_);

  const size_t max_queued_;
  Mutex mu_;
  CondVar work_cv_;  // workers: a job was queued, or the pool stops
  CondVar done_cv_;  // waiters: some batch's last job finished
  std::deque<Job> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<Thread> threads_;
};

}  // namespace kvchaos
