// HealthCheckExecutor: one reusable ucm_health_io worker, replaced when a probe times out.
#include "core/store/health_check_executor.h"

#include <algorithm>
#include <optional>
#include <string>

namespace kvchaos::store {

// State shared by the executor and one worker thread. The executor may drop its reference to a
// retired worker only after joining it, so the worker never outlives this struct.
struct HealthCheckExecutor::Worker {
  explicit Worker(Runtime& rt) : mu(rt), cv(rt) {}
  Mutex mu;
  CondVar cv;
  std::function<Status()> job GUARDED_BY(mu);
  std::optional<Status> result GUARDED_BY(mu);
  uint64_t job_id GUARDED_BY(mu) = 0;      // id of the job being run or queued
  uint64_t result_id GUARDED_BY(mu) = 0;   // id the result belongs to
  bool retired GUARDED_BY(mu) = false;     // no more jobs; results are dropped
  bool exited GUARDED_BY(mu) = false;

  void Loop() {
    MutexLock lock(mu);
    for (;;) {
      while (job == nullptr && !retired) cv.Wait(mu);
      // Retired while idle, or before it picked its probe up: that probe's Run already answered
      // Timeout, so it must not touch the disk now.
      if (retired) break;
      std::function<Status()> fn = std::move(job);
      job = nullptr;
      const uint64_t id = job_id;
      mu.Unlock();
      Status status = fn();  // never run a probe while holding the lock
      mu.Lock();
      if (retired) break;  // timed out: its late result must not reach any window
      result = std::move(status);
      result_id = id;
      cv.NotifyAll();
    }
    exited = true;
    cv.NotifyAll();
  }
};

HealthCheckExecutor::HealthCheckExecutor(Runtime& runtime, int max_stuck_per_owner)
    : runtime_(runtime), max_stuck_per_owner_(std::max(1, max_stuck_per_owner)) {}

HealthCheckExecutor::~HealthCheckExecutor() {
  if (current_) {
    {
      MutexLock lock(current_->mu);
      current_->retired = true;
      current_->cv.NotifyAll();
    }
    current_thread_.Join();
  }
  for (Retired& r : retired_) r.thread.Join();
}

void HealthCheckExecutor::StartWorker() {
  current_ = std::make_shared<Worker>(runtime_);
  std::shared_ptr<Worker> worker = current_;
  current_thread_ = runtime_.Spawn("ucm_health_io", [worker] { worker->Loop(); });
  ++workers_started_;
}

void HealthCheckExecutor::ReapExited() {
  for (auto it = retired_.begin(); it != retired_.end();) {
    bool exited = false;
    {
      MutexLock lock(it->worker->mu);
      exited = it->worker->exited;
    }
    if (exited) {
      it->thread.Join();
      it = retired_.erase(it);
    } else {
      ++it;
    }
  }
}

int HealthCheckExecutor::workers_alive() {
  ReapExited();
  return static_cast<int>(retired_.size()) + (current_ ? 1 : 0);
}

Status HealthCheckExecutor::Run(std::function<Status()> probe, Duration timeout, int owner) {
  // Upstream's rule: a zero timeout answers at once. Nothing runs, as its result could not count.
  if (timeout <= Duration::zero()) {
    return Status::Timeout("health probe not run: its timeout is " + std::to_string(ToMillis(timeout)) + " ms");
  }
  ReapExited();
  int stuck = 0;
  for (const Retired& r : retired_) stuck += r.owner == owner ? 1 : 0;
  if (stuck >= max_stuck_per_owner_) {
    return Status::Timeout("health probe not run: " + std::to_string(stuck) +
                           " earlier probes of it are still stuck (at most " + std::to_string(max_stuck_per_owner_) +
                           " are left running)");
  }
  if (!current_) StartWorker();
  Worker& w = *current_;
  bool finished = false;
  Status status;
  {
    MutexLock lock(w.mu);
    const uint64_t id = ++w.job_id;
    w.job = std::move(probe);
    w.cv.NotifyAll();
    // From the hand-over, not from when the worker picks the probe up: a worker that has not
    // started (or a probe that has not begun) uses the same budget.
    const MonoTime deadline = runtime_.Now() + timeout;
    finished = true;
    while (!(w.result.has_value() && w.result_id == id)) {
      if (!w.cv.WaitUntil(w.mu, deadline)) {
        finished = w.result.has_value() && w.result_id == id;
        break;
      }
    }
    if (finished) {
      status = std::move(*w.result);
      w.result.reset();
    } else {
      w.retired = true;  // the probe keeps running; its result will be dropped
    }
  }
  if (!finished) {
    retired_.push_back(Retired{std::move(current_), std::move(current_thread_), owner});
    current_.reset();
    return Status::Timeout("health probe did not finish within " + std::to_string(ToMillis(timeout)) + " ms");
  }
  return status;
}

}  // namespace kvchaos::store
