// RuntimeTaskQueue: the node's HTTP workers on kvchaos::Runtime (see runtime_task_queue.h).
#include "core/service/runtime_task_queue.h"

#include <algorithm>

namespace kvchaos::service {

RuntimeTaskQueue::RuntimeTaskQueue(Runtime& runtime, const std::string& name, int threads, size_t max_queued)
    : max_queued_(std::max<size_t>(1, max_queued)), mu_(runtime), changed_(runtime) {
  const int n = std::max(1, threads);
  workers_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) workers_.push_back(runtime.Spawn(name + std::to_string(i), [this] { Work(); }));
}

RuntimeTaskQueue::~RuntimeTaskQueue() { Shutdown(); }

bool RuntimeTaskQueue::TryEnqueue(std::function<void()> fn) {
  MutexLock lock(mu_);
  if (shutdown_ || jobs_.size() >= max_queued_) return false;
  jobs_.push_back(std::move(fn));
  changed_.NotifyOne();
  return true;
}

void RuntimeTaskQueue::Shutdown() {
  {
    MutexLock lock(mu_);
    shutdown_ = true;
    changed_.NotifyAll();
  }
  for (Thread& t : workers_) t.Join();
}

void RuntimeTaskQueue::Work() {
  while (true) {
    std::function<void()> job;
    {
      MutexLock lock(mu_);
      while (!shutdown_ && jobs_.empty()) changed_.Wait(mu_);
      if (jobs_.empty()) return;  // shutting down and nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace kvchaos::service
