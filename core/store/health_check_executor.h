// HealthCheckExecutor: runs recovery probes one at a time on a reusable worker thread named
// `ucm_health_io` (upstream ucm/store/detail/health_check_executor.h).
//
// Run() hands a probe to the current worker and waits for it up to a timeout. Without timeouts the
// same worker serves every probe of every backend. When a probe times out, Run() returns Timeout
// (one failure for the window), the worker is retired — it takes no more work, and whatever its
// probe returns later is dropped — and the next Run() starts a new worker. A probe is not
// interrupted in the kernel, so retired workers may pile up while a path hangs; each exits when its
// probe returns and is joined then (or at the latest when the executor is destroyed, which waits
// for all of them). Retired workers are bounded per owner (the backend a probe is for): with
// `max_stuck_per_owner` of an owner's probes still stuck, Run() for that owner answers Timeout at
// once without starting a thread, so a path that hangs for hours holds that many threads, not one
// per probe interval, and other paths' probes still run. Threads, time and waits go through
// kvchaos::Runtime. New workers inherit the CPU affinity of the thread that calls Run() (the
// monitor, `ucm_health_pmon`).
#pragma once

#include <functional>
#include <list>
#include <memory>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos::store {

class HealthCheckExecutor {
 public:
  static constexpr int kDefaultMaxStuckPerOwner = 2;

  explicit HealthCheckExecutor(Runtime& runtime, int max_stuck_per_owner = kDefaultMaxStuckPerOwner);
  ~HealthCheckExecutor();
  HealthCheckExecutor(const HealthCheckExecutor&) = delete;
  HealthCheckExecutor& operator=(const HealthCheckExecutor&) = delete;

  // Runs `probe` (for `owner`, e.g. a backend index) on the worker; its Status unchanged, or
  // Timeout `timeout` after the hand-over (a probe its worker had not begun by then never runs),
  // or Timeout at once — nothing run — when timeout <= 0 (as upstream) or the owner's stuck probes
  // are at the bound. Called by one thread at a time.
  Status Run(std::function<Status()> probe, Duration timeout, int owner = 0);

  // Workers started so far, and those still alive (current + retired ones not yet returned).
  int workers_started() const { return workers_started_; }
  int workers_alive();

 private:
  struct Worker;
  void StartWorker();
  void ReapExited();

  Runtime& runtime_;
  const int max_stuck_per_owner_;
  std::shared_ptr<Worker> current_;
  struct Retired {
    std::shared_ptr<Worker> worker;
    Thread thread;
    int owner = 0;
  };
  Thread current_thread_;
  std::list<Retired> retired_;
  int workers_started_ = 0;
};

}  // namespace kvchaos::store
