// AioEngine: attempts through libaio (io_submit / io_getevents), normally with O_DIRECT and
// 4096-aligned buffers. One submitter thread (`ucm_aio_sub`) opens the file — metadata calls stay
// synchronous, as upstream — and submits, keeping at most `concurrency` attempts in flight (the
// queue depth); one reaper thread (`ucm_aio_reap`) collects completions, closes files and enforces
// the per-attempt deadlines, measured from io_submit; a completion thread (`ucm_aio_done`) runs the
// callbacks (window samples, retries, a block's commit rename), so a slow rename never holds back
// the reaping of other completions and the queue stays full. A timed-out attempt gives its queue slot back
// at once but stays in the kernel; its completion is reported late and only then is its file
// closed and its buffer released. AioOps is the seam tests use to hold a completion back.
#pragma once

#include <libaio.h>

#include <deque>
#include <map>
#include <memory>

#include "core/common/runtime.h"
#include "core/store/file_ops.h"
#include "core/store/io_engine.h"

namespace kvchaos::store {

// libaio calls; each returns what libaio returns (negative errno on failure).
class AioOps {
 public:
  virtual ~AioOps() = default;
  virtual int Setup(int max_events, io_context_t* ctx) = 0;
  virtual int Submit(io_context_t ctx, long count, struct iocb** iocbs) = 0;
  virtual int GetEvents(io_context_t ctx, long min_nr, long max_nr, struct io_event* events, struct timespec* timeout) = 0;
  virtual int Destroy(io_context_t ctx) = 0;
  static AioOps& Real();
};

class AioEngine final : public IoEngine {
 public:
  // Fails (IoError) when io_setup does.
  static Result<std::unique_ptr<AioEngine>> Create(Runtime& runtime, FileOps& ops, AioOps& aio, int concurrency);
  ~AioEngine() override;

  void Submit(std::shared_ptr<IoRequest> request) override EXCLUDES(mu_);
  void Stop() override EXCLUDES(mu_);

 private:
  struct InFlight;
  AioEngine(Runtime& runtime, FileOps& ops, AioOps& aio, int concurrency, io_context_t ctx);
  void SubmitLoop() EXCLUDES(mu_);
  void ReapLoop() EXCLUDES(mu_);
  void Finish(std::shared_ptr<IoRequest> request, Status status) EXCLUDES(mu_);
  void Deliver(std::shared_ptr<IoRequest> request, Status status, bool on_time) EXCLUDES(mu_);
  void DoneLoop() EXCLUDES(mu_);

  Runtime& runtime_;
  FileOps& ops_;
  AioOps& aio_;
  const int concurrency_;
  const int capacity_;  // events the context holds: timed-out attempts may still occupy some
  io_context_t ctx_;
  Mutex mu_;
  CondVar submit_cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool submitter_done_ GUARDED_BY(mu_) = false;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::deque<std::shared_ptr<IoRequest>> queue_ GUARDED_BY(mu_);
  int active_ GUARDED_BY(mu_) = 0;       // in the kernel and not timed out (the queue depth)
  int outstanding_ GUARDED_BY(mu_) = 0;  // in the kernel, timed out or not
  uint64_t next_seq_ GUARDED_BY(mu_) = 0;
  std::map<uint64_t, std::unique_ptr<InFlight>> in_flight_ GUARDED_BY(mu_);
  struct Completion {
    std::shared_ptr<IoRequest> request;
    Status status;
    bool on_time;
  };
  CondVar done_cv_;
  std::deque<Completion> completions_ GUARDED_BY(mu_);
  bool reaper_done_ GUARDED_BY(mu_) = false;
  Thread submitter_;
  Thread reaper_;
  Thread completer_;
};

}  // namespace kvchaos::store
