// RuntimeTaskQueue: httplib's connection workers on kvchaos::Runtime (see runtime_task_queue.h).
#include "core/service/runtime_task_queue.h"

#include <algorithm>

namespace kvchaos::service {

RuntimeTaskQueue::RuntimeTaskQueue(Runtime& runtime, const std::string& name, int threads, size_t max_queued)
    : max_queued_(std::max<size_t>(1, max_queued)), mu_(runtime), changed_(runtime) {
  const int n = std::max(1, threads);
  workers_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) workers_.push_back(runtime.Spawn(name + std::to_string(i), [this] { Work(); }));
}

RuntimeTaskQueue::~RuntimeTaskQueue() { shutdown(); }

void RuntimeTaskQueue::enqueue(std::function<void()> fn) {
  {
    MutexLock lock(mu_);
    // The predicates here run with mu_ held.
    changed_.Wait(mu_, [this]() NO_THREAD_SAFETY_ANALYSIS { return shutdown_ || jobs_.size() < max_queued_; });
    if (!shutdown_) {
      jobs_.push_back(std::move(fn));
      changed_.NotifyAll();
      return;
    }
  }
  // httplib never enqueues after shutdown(); should it, serving inline beats leaking the socket.
  fn();
}

void RuntimeTaskQueue::shutdown() {
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
      changed_.Wait(mu_, [this]() NO_THREAD_SAFETY_ANALYSIS { return shutdown_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // shutting down and nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
      changed_.NotifyAll();  // room for a blocked enqueue()
    }
    job();
  }
}

std::function<httplib::TaskQueue*()> RuntimeTaskQueue::Factory(Runtime& runtime, std::string name, int threads,
                                                               size_t max_queued) {
  return [&runtime, name = std::move(name), threads, max_queued]() -> httplib::TaskQueue* {
    return new RuntimeTaskQueue(runtime, name, threads, max_queued);  // httplib takes ownership
  };
}

}  // namespace kvchaos::service
