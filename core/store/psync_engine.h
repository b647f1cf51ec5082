// PsyncEngine: attempts run on a pool of `concurrency` threads (`ucm_psync_io`) doing open,
// preadv/pwritev (then fdatasync for a durable write: the same cost as O_DSYNC for one write per
// open, and a call tests and the simulator see) and close through FileOps. A timer thread (`ucm_psync_tmr`) watches the running
// attempts' deadlines; when one passes it reports Timeout and starts a replacement worker, since
// the stuck one is blocked in the kernel; the stuck worker reports the late result and exits when
// its call returns. Replacements are capped (4 × concurrency stuck workers) so a hung mount cannot
// grow the pool without bound; past the cap, work waits for the pool like any other. The queue
// holds at most `max_queued` attempts; Submit refuses more (IoEngine::Submit).
#pragma once

#include <deque>
#include <list>
#include <map>
#include <memory>

#include "core/common/runtime.h"
#include "core/store/file_ops.h"
#include "core/store/io_engine.h"

namespace kvchaos::store {

class PsyncEngine final : public IoEngine {
 public:
  PsyncEngine(Runtime& runtime, FileOps& ops, int concurrency, size_t max_queued = kDefaultMaxQueued);
  ~PsyncEngine() override;

  void Submit(std::shared_ptr<IoRequest> request) override EXCLUDES(mu_);
  void Stop() override EXCLUDES(mu_);

 private:
  struct WorkerSlot;
  void WorkerLoop(WorkerSlot* slot) EXCLUDES(mu_);
  void TimerLoop() EXCLUDES(mu_);
  void SpawnWorker() REQUIRES(mu_);
  void Execute(IoRequest& request);

  Runtime& runtime_;
  FileOps& ops_;
  const int concurrency_;
  const size_t max_queued_;
  const int max_stuck_;
  Mutex mu_;
  CondVar work_cv_;
  CondVar timer_cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::deque<std::shared_ptr<IoRequest>> queue_ GUARDED_BY(mu_);
  // Running attempts with a deadline, ordered by it.
  std::multimap<MonoTime, std::shared_ptr<IoRequest>> deadlines_ GUARDED_BY(mu_);
  int stuck_workers_ GUARDED_BY(mu_) = 0;
  std::list<std::unique_ptr<WorkerSlot>> workers_ GUARDED_BY(mu_);
  Thread timer_;
};

}  // namespace kvchaos::store
