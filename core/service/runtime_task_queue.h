// RuntimeTaskQueue: a fixed pool of workers on kvchaos::Runtime (DESIGN.md: every thread and wait
// of core/service goes through the runtime) that runs the node's HTTP requests. Workers are named
// `{name}{i}`, e.g. kvc_hw_meta_0, so they show in top, gdb and log lines, and wait on the
// runtime's Mutex/CondVar.
//
// The queue is bounded and never blocks its caller (the port's event loop): TryEnqueue answers
// false when `max_queued` jobs already wait, and the caller refuses that request (503) at once.
// Shutdown() lets the workers finish what is queued, then joins every one of them.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/thread_annotations.h"

namespace kvchaos::service {

class RuntimeTaskQueue {
 public:
  // `threads` >= 1 workers named `name` + index (keep `name` to 13 characters: Linux keeps 15).
  RuntimeTaskQueue(Runtime& runtime, const std::string& name, int threads, size_t max_queued);
  ~RuntimeTaskQueue();  // calls Shutdown()
  RuntimeTaskQueue(const RuntimeTaskQueue&) = delete;
  RuntimeTaskQueue& operator=(const RuntimeTaskQueue&) = delete;

  // Queues `fn`; false (and `fn` dropped) when the queue is full or shutting down.
  bool TryEnqueue(std::function<void()> fn) EXCLUDES(mu_);
  // Runs what is queued, then joins all workers. Idempotent.
  void Shutdown() EXCLUDES(mu_);

 private:
  void Work() EXCLUDES(mu_);

  const size_t max_queued_;
  Mutex mu_;
  CondVar changed_;  // a job was queued, or shutdown began
  std::deque<std::function<void()>> jobs_ GUARDED_BY(mu_);
  bool shutdown_ GUARDED_BY(mu_) = false;
  std::vector<Thread> workers_;
};

}  // namespace kvchaos::service
