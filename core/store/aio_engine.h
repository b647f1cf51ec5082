// AioEngine: attempts through libaio (io_submit / io_getevents), normally with O_DIRECT and
// 4096-aligned buffers.
//
// A pool of `concurrency` submitter threads (`ucm_aio_sub`) prepares attempts: each takes one,
// opens its file (metadata calls stay synchronous, as upstream), reserves a written block file's
// full size with fallocate and sets up the iocb, then takes the next. So a slow open, or a hung
// mount, holds one preparer, never the queue; and opens run ahead of the I/O. The fallocate
// matters for speed: on ext4 (and XFS) an O_DIRECT write that extends its file is completed inside
// io_submit, so without it every dump would run at queue depth one.
// At most `concurrency` attempts are in the kernel at once (the queue depth, as fio's iodepth), and
// at most 4 × `concurrency` more are being prepared or wait, prepared, for a slot: creating a block
// file (a new inode, often a new `<3hex>` directory, an allocation) costs far more, and varies far
// more, than an I/O slot's turn, so files are prepared well ahead of the queue. Prepared attempts
// that the kernel runs asynchronously (direct reads, direct writes into reserved space) wait in a
// FIFO; whoever frees or finds a slot submits them in one io_submit — mostly the reaper, right
// after it reaped the completions that freed the slots and before it closes their files or queues
// their callbacks, as fio does (reap, submit), so keeping the queue full costs no thread wake-up. Attempts io_submit would run synchronously (buffered I/O, writes where
// fallocate is unsupported) are submitted by their own preparer once it gets a slot, so they
// cannot stall the reaper.
// One reaper thread (`ucm_aio_reap`) collects completions, closes files and enforces the
// per-attempt deadlines: an attempt's clock runs while it executes — from when a preparer picks it
// up (its open counts, as in psync) and while it is in the kernel — and is paused while, prepared,
// it waits for a slot (queueing is not a backend failure). A completion thread (`ucm_aio_done`)
// runs the callbacks (window samples, retries, a block's commit rename), so a slow rename never
// holds back reaping. A timed-out attempt gives its slot back at once but goes on: a preparer stuck
// in it is replaced (at most 4 × concurrency stuck ones, as psync), its I/O stays in the kernel,
// and its completion is reported late; only then are its file closed and its buffer released.
// Durable writes (IoRequest::durable): when the reaper reaps a durable write's completion it
// re-arms the same iocb as IOCB_CMD_FDSYNC (Linux 4.18+) and submits it; the attempt keeps its
// slot and deadline, and completes when the sync does. The kernel runs the sync on its own
// workqueue, so no engine thread waits for the disk and the queue keeps its depth; an fdatasync
// on the completion path would serialise every sync on one thread. O_DSYNC measured the same
// (4 MiB blocks, ext4 on virtio: 1.02x of this; tmpfs: 0.92x-1.6x, within the noise of a shared
// VM), but its sync is no call at all: faultfs's crash model and the tests' CrashFileOps lost the
// data of O_DSYNC writes, and the simulator would have to model a flag instead of a call.
// Bounds: Submit refuses attempts past `max_queued` waiting for pickup (IoEngine::Submit); the
// callback queue holds at most the context's capacity, and whoever delivers a completion past
// that (the reaper, a failing preparer) waits for the completion thread: a slow callback slows the
// engine down instead of growing memory.
// io_submit errors fail the attempt on its path (it is retried on the next); EAGAIN is first
// tried again, every millisecond, as long as the attempt's deadline leaves time (a bounded number
// of times without one) — on the thread that submits, the reaper included, so a kernel short of
// aio resources delays reaping by at most one attempt timeout.
// AioOps is the seam tests use to hold a completion back or make io_submit fail.
#pragma once

#include <libaio.h>

#include <deque>
#include <list>
#include <map>
#include <memory>
#include <vector>

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

// How well the engine kept the kernel queue full (for benchmarks: `kvchaos store bench` prints it).
struct AioQueueStats {
  double busy_s = 0;     // time with work in the engine (queued, being prepared or in the kernel)
  double depth_s = 0;    // integral of the queue depth (attempts in the kernel) over busy time
  double starved_s = 0;  // busy time with a free slot while work waited outside the kernel
  double starved_ready_s = 0;  // part of it where a prepared attempt waited (submission lag)
  uint64_t submits = 0;  // io_submit calls
  uint64_t submitted = 0;  // attempts they carried
  // Times a completion waited for room in the callback queue (the callback thread, with its
  // renames and retries, was the bottleneck), and the most completions that queue held.
  uint64_t completion_waits = 0;
  uint64_t completions_max = 0;
  double mean_depth() const { return busy_s > 0 ? depth_s / busy_s : 0; }
};

class AioEngine final : public IoEngine {
 public:
  // Fails (IoError) when io_setup does.
  static Result<std::unique_ptr<AioEngine>> Create(Runtime& runtime, FileOps& ops, AioOps& aio, int concurrency,
                                                   size_t max_queued = kDefaultMaxQueued);
  ~AioEngine() override;

  void Submit(std::shared_ptr<IoRequest> request) override EXCLUDES(mu_);
  void Stop() override EXCLUDES(mu_);

  AioQueueStats queue_stats() EXCLUDES(mu_);

 private:
  struct InFlight;
  struct SubmitterSlot;
  AioEngine(Runtime& runtime, FileOps& ops, AioOps& aio, int concurrency, size_t max_queued, io_context_t ctx);
  void SpawnSubmitter() REQUIRES(mu_);
  void SubmitterLoop(SubmitterSlot* slot) EXCLUDES(mu_);
  // Opens the file, reserves a written block file's size and sets up the iocb; false (and the
  // attempt finished) when that failed. *async: the kernel will not run it inside io_submit.
  bool Prepare(InFlight* flight, bool* async) EXCLUDES(mu_);
  // After Prepare: queues the attempt for a slot, or waits for one, and submits what it can.
  void Hand(InFlight* flight, bool async) EXCLUDES(mu_);
  // Moves prepared attempts from ready_ into free slots (deadlines start); the caller submits them.
  std::vector<InFlight*> TakeReady() REQUIRES(mu_);
  void EnterKernel(InFlight* flight) REQUIRES(mu_);
  // Adds the time since the last call to the queue statistics, under the state before a change.
  void Tick() REQUIRES(mu_);
  // The counters' invariants (aborts when one broke): checked at every Tick, i.e. every change.
  void CheckCounters() const REQUIRES(mu_);
  // io_submit for each attempt of `batch` in order; one the kernel refuses fails on its path,
  // except that EAGAIN is tried again while MaySubmitAgainAfterEagain allows.
  void SubmitBatch(std::vector<InFlight*> batch) EXCLUDES(mu_);
  // After the `tries`-th EAGAIN of `raw`: waits a moment and answers true when another io_submit
  // still fits before its deadline (or, without one, within a bounded number of tries).
  bool MaySubmitAgainAfterEagain(InFlight* raw, int tries) EXCLUDES(mu_);
  void FailBeforeKernel(InFlight* flight, int fd, Status status) EXCLUDES(mu_);
  void FreeSlot(InFlight* flight) REQUIRES(mu_);
  // A durable write whose data the kernel just wrote (`res` bytes) and that must now be synced.
  bool NeedsDataSync(const InFlight& flight, long res) const REQUIRES(mu_);
  void ReapLoop() EXCLUDES(mu_);
  void Finish(std::shared_ptr<IoRequest> request, Status status) EXCLUDES(mu_);
  void Deliver(std::shared_ptr<IoRequest> request, Status status, bool on_time) EXCLUDES(mu_);
  void DoneLoop() EXCLUDES(mu_);

  Runtime& runtime_;
  FileOps& ops_;
  AioOps& aio_;
  const int concurrency_;
  const size_t max_queued_;  // attempts waiting for pickup; Submit refuses more
  const int capacity_;  // events the context holds: timed-out attempts may still occupy some
  const int max_stuck_;
  io_context_t ctx_;
  Mutex mu_;
  CondVar pickup_cv_;  // preparers waiting for work
  CondVar slot_cv_;    // preparers holding a synchronous attempt, waiting for a slot
  bool stopping_ GUARDED_BY(mu_) = false;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::deque<std::shared_ptr<IoRequest>> queue_ GUARDED_BY(mu_);
  std::deque<InFlight*> ready_ GUARDED_BY(mu_);  // prepared, asynchronous, waiting for a slot
  int pending_ GUARDED_BY(mu_) = 0;      // picked up and not yet in the kernel
  int active_ GUARDED_BY(mu_) = 0;       // in the kernel and not timed out (the queue depth)
  int outstanding_ GUARDED_BY(mu_) = 0;  // picked up and not completed, timed out or not
  int slot_waiters_ GUARDED_BY(mu_) = 0;
  AioQueueStats stats_ GUARDED_BY(mu_);
  MonoTime last_tick_ GUARDED_BY(mu_){};
  uint64_t next_seq_ GUARDED_BY(mu_) = 0;
  std::map<uint64_t, std::unique_ptr<InFlight>> in_flight_ GUARDED_BY(mu_);
  std::list<std::unique_ptr<SubmitterSlot>> submitters_ GUARDED_BY(mu_);
  int live_submitters_ GUARDED_BY(mu_) = 0;
  int stuck_submitters_ GUARDED_BY(mu_) = 0;
  struct Completion {
    std::shared_ptr<IoRequest> request;
    Status status;
    bool on_time;
  };
  CondVar done_cv_;   // the completion thread waits for completions
  CondVar room_cv_;   // a deliverer waits for room in completions_
  std::deque<Completion> completions_ GUARDED_BY(mu_);  // at most capacity_ (back-pressure)
  bool reaper_done_ GUARDED_BY(mu_) = false;
  Thread reaper_;
  Thread completer_;
};

}  // namespace kvchaos::store
