// RuntimeTaskQueue: cpp-httplib's worker pool moved onto kvchaos::Runtime (DESIGN.md: every thread
// and wait of core/service goes through the runtime). httplib::Server hands each accepted
// connection to a TaskQueue; ours runs it on a fixed set of workers spawned with Runtime::Spawn
// (named `{name}{i}`, e.g. kvc_hw_meta_0, so they show in top, gdb and log lines) that wait on the
// runtime's Mutex/CondVar.
//
// The queue is bounded: when `max_queued` connections already wait, enqueue() blocks the accept
// thread until a worker takes one, so overload backs up into the kernel's listen backlog instead of
// growing memory without limit (httplib 0.11's enqueue cannot refuse a connection: dropping it
// would leak the socket). shutdown() — called by httplib when its accept loop ends, i.e. after
// Server::stop() — lets the workers finish what is queued, then joins every one of them.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/thread_annotations.h"

namespace kvchaos::service {

class RuntimeTaskQueue final : public httplib::TaskQueue {
 public:
  // `threads` >= 1 workers named `name` + index (keep `name` to 13 characters: Linux keeps 15).
  RuntimeTaskQueue(Runtime& runtime, const std::string& name, int threads, size_t max_queued);
  ~RuntimeTaskQueue() override;  // calls shutdown()
  RuntimeTaskQueue(const RuntimeTaskQueue&) = delete;
  RuntimeTaskQueue& operator=(const RuntimeTaskQueue&) = delete;

  // Queues `fn` (a connection to serve); blocks while the queue is full.
  void enqueue(std::function<void()> fn) override;
  // Runs what is queued, then joins all workers. Idempotent.
  void shutdown() override;

  // A factory for httplib::Server::new_task_queue (the server owns and deletes each queue).
  static std::function<httplib::TaskQueue*()> Factory(Runtime& runtime, std::string name, int threads,
                                                      size_t max_queued);

 private:
  void Work();

  const size_t max_queued_;
  Mutex mu_;
  CondVar changed_;  // a job was queued or taken, or shutdown began
  std::deque<std::function<void()>> jobs_ GUARDED_BY(mu_);
  bool shutdown_ GUARDED_BY(mu_) = false;
  std::vector<Thread> workers_;
};

}  // namespace kvchaos::service
