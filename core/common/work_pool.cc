// WorkPool: see the header.
#include "core/common/work_pool.h"

#include <utility>

namespace kvchaos {

WorkPool::WorkPool(Runtime& runtime, size_t threads, std::string thread_name, size_t max_queued)
    : max_queued_(max_queued), mu_(runtime), work_cv_(runtime), done_cv_(runtime) {
  threads_.reserve(threads);
  for (size_t t = 0; t < threads; ++t) threads_.push_back(runtime.Spawn(thread_name, [this] { WorkerLoop(); }));
}

WorkPool::~WorkPool() {
  mu_.Lock();
  stopping_ = true;
  mu_.Unlock();
  work_cv_.NotifyAll();
  for (Thread& t : threads_) t.Join();
}

void WorkPool::Batch::Add(std::function<void()> job) {
  WorkPool& pool = pool_;
  pool.mu_.Lock();
  // No thread will take it (none, or the queue is full): run it here rather than queue it.
  if (pool.threads_.empty() || pool.queue_.size() >= pool.max_queued_) {
    pool.mu_.Unlock();
    job();
    return;
  }
  ++pending_;
  pool.queue_.push_back({this, std::move(job)});
  pool.mu_.Unlock();
  pool.work_cv_.NotifyOne();
}

void WorkPool::Batch::Wait() {
  WorkPool& pool = pool_;
  pool.mu_.Lock();
  while (pending_ > 0) {
    // Help with this batch's own queued jobs first; wait only for those already running.
    auto mine = pool.queue_.begin();
    while (mine != pool.queue_.end() && mine->batch != this) ++mine;
    if (mine == pool.queue_.end()) {
      pool.done_cv_.Wait(pool.mu_);
      continue;
    }
    std::function<void()> fn = std::move(mine->fn);
    pool.queue_.erase(mine);
    pool.mu_.Unlock();
    fn();
    pool.mu_.Lock();
    pool.Finished(*this);
  }
  pool.mu_.Unlock();
}

void WorkPool::Finished(Batch& batch) {
  if (--batch.pending_ == 0) done_cv_.NotifyAll();
}

void WorkPool::WorkerLoop() {
  mu_.Lock();
  while (true) {
    if (queue_.empty()) {
      if (stopping_) break;
      work_cv_.Wait(mu_);
      continue;
    }
    Job job = std::move(queue_.front());
    queue_.pop_front();
    mu_.Unlock();
    job.fn();
    mu_.Lock();
    Finished(*job.batch);
  }
  mu_.Unlock();
}

}  // namespace kvchaos
