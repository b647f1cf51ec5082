// WorkPool: see the header.
#include "core/common/work_pool.h"

#include <utility>

#include "core/common/assert.h"

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
  pool_.mu_.Lock();
  // No thread will take it (none, or the queue is full): run it here rather than queue it.
  if (pool_.threads_.empty() || pool_.queue_.size() >= pool_.max_queued_) {
    pool_.mu_.Unlock();
    job();
    return;
  }
  ++pending_;
  pool_.queue_.push_back({this, std::move(job)});
  pool_.mu_.Unlock();
  pool_.work_cv_.NotifyOne();
}

void WorkPool::Batch::Wait() {
  pool_.mu_.Lock();
  while (pending_ > 0) {
    // Help with this batch's own queued jobs first; wait only for those already running.
    auto mine = pool_.queue_.begin();
    while (mine != pool_.queue_.end() && mine->batch != this) ++mine;
    if (mine == pool_.queue_.end()) {
      pool_.done_cv_.Wait(pool_.mu_);
      continue;
    }
    std::function<void()> fn = std::move(mine->fn);
    pool_.queue_.erase(mine);
    pool_.mu_.Unlock();
    fn();
    pool_.mu_.Lock();
    pool_.Finished(*this);
  }
  pool_.mu_.Unlock();
}

// The analysis cannot tell that batch.pool_ is this pool (every queued Batch is one of ours), so
// it would ask for batch.pool_.mu_ where mu_ is held.
void WorkPool::Finished(Batch& batch) NO_THREAD_SAFETY_ANALYSIS {
  KVCHAOS_ASSERT(&batch.pool_ == this, "a job of another pool's batch");
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
