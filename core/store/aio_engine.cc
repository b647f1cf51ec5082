// AioEngine: libaio submission, completion and deadlines (see aio_engine.h).
#include "core/store/aio_engine.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "core/common/assert.h"

namespace kvchaos::store {
namespace {

class RealAioOps final : public AioOps {
 public:
  int Setup(int max_events, io_context_t* ctx) override { return io_setup(max_events, ctx); }
  int Submit(io_context_t ctx, long count, struct iocb** iocbs) override { return io_submit(ctx, count, iocbs); }
  int GetEvents(io_context_t ctx, long min_nr, long max_nr, struct io_event* events, struct timespec* timeout) override {
    for (;;) {
      const int r = io_getevents(ctx, min_nr, max_nr, events, timeout);
      if (r != -EINTR) return r;
    }
  }
  int Destroy(io_context_t ctx) override { return io_destroy(ctx); }
};

// How long the reaper blocks in io_getevents before it looks at the deadlines again.
constexpr auto kReapPoll = std::chrono::milliseconds(2);

// io_submit's EAGAIN (the kernel is short of resources for the moment) is retried on the same
// path after this pause, as upstream retries it; never past the attempt's deadline, and at most
// kEagainTriesUntimed times for an attempt without one (upstream would spin forever).
constexpr auto kEagainPause = std::chrono::milliseconds(1);
constexpr int kEagainTriesUntimed = 100;

// Attempts picked up but not yet in the kernel (being opened, or prepared and waiting for a slot),
// per unit of concurrency. Opens of new block files (inode and directory creation, fallocate) are
// far slower and more jittery than the I/O slots they feed on some file systems; a deeper window
// keeps prepared files ready when several of them stall at once. Each holds one open fd.
constexpr int kPrepareAhead = 4;

// Events the io context holds, and the cap on attempts picked up and not completed: the queue, the
// prepared window and room for timed-out attempts still in the kernel.
int Capacity(int concurrency) { return (2 + kPrepareAhead) * concurrency + 16; }

}  // namespace

AioOps& AioOps::Real() {
  static RealAioOps ops;
  return ops;
}

struct AioEngine::InFlight {
  std::shared_ptr<IoRequest> request;
  int fd = -1;
  struct iocb cb {};
  uint64_t seq = 0;  // start order: deadlines are checked in it, never in pointer order
  // All below guarded by the engine's mu_.
  bool timed_out = false;
  bool pending = true;   // picked up, not yet in the kernel (counted in pending_)
  bool in_slot = false;  // in the kernel and on time (counted in active_)
  bool paused = false;   // prepared and waiting for a slot: its clock does not run
  bool syncing = false;  // a durable write whose data is written: its IOCB_CMD_FDSYNC is in the kernel
  MonoTime started{};
  Duration spent{0};     // time it executed before it was paused (its open)
};

struct AioEngine::SubmitterSlot {
  Thread thread;
  // All guarded by the engine's mu_.
  bool exited = false;
  bool busy = false;      // executing attempt `current` and the kernel does not have it yet
  uint64_t current = 0;
  bool replaced = false;  // a replacement was started for it: exit after this attempt
};

Result<std::unique_ptr<AioEngine>> AioEngine::Create(Runtime& runtime, FileOps& ops, AioOps& aio, int concurrency,
                                                   size_t max_queued) {
  io_context_t ctx = nullptr;
  const int capacity = Capacity(concurrency);
  const int r = aio.Setup(capacity, &ctx);
  if (r < 0) return Status::IoError("io_setup(" + std::to_string(capacity) + ") failed", -r);
  return std::unique_ptr<AioEngine>(new AioEngine(runtime, ops, aio, concurrency, max_queued, ctx));
}

AioEngine::AioEngine(Runtime& runtime, FileOps& ops, AioOps& aio, int concurrency, size_t max_queued,
                     io_context_t ctx)
    : runtime_(runtime),
      ops_(ops),
      aio_(aio),
      concurrency_(concurrency),
      max_queued_(std::max<size_t>(1, max_queued)),
      capacity_(Capacity(concurrency)),
      max_stuck_(4 * concurrency),
      ctx_(ctx),
      mu_(runtime),
      pickup_cv_(runtime),
      slot_cv_(runtime),
      done_cv_(runtime),
      room_cv_(runtime) {
  {
    MutexLock lock(mu_);
    for (int i = 0; i < concurrency_; ++i) SpawnSubmitter();
  }
  reaper_ = runtime_.Spawn("ucm_aio_reap", [this] { ReapLoop(); });
  completer_ = runtime_.Spawn("ucm_aio_done", [this] { DoneLoop(); });
}

AioEngine::~AioEngine() { Stop(); }

void AioEngine::SpawnSubmitter() {
  // Join the submitters that already left (they exited after a late attempt).
  for (auto it = submitters_.begin(); it != submitters_.end();) {
    if ((*it)->exited) {
      (*it)->thread.Join();
      it = submitters_.erase(it);
    } else {
      ++it;
    }
  }
  auto slot = std::make_unique<SubmitterSlot>();
  SubmitterSlot* raw = slot.get();
  submitters_.push_back(std::move(slot));
  ++live_submitters_;
  raw->thread = runtime_.Spawn("ucm_aio_sub", [this, raw] { SubmitterLoop(raw); });
}

void AioEngine::Submit(std::shared_ptr<IoRequest> request) {
  {
    MutexLock lock(mu_);
    Tick();
    if (queue_.size() < max_queued_) {
      queue_.push_back(std::move(request));
      pickup_cv_.NotifyOne();
      return;
    }
  }
  request->state.store(IoRequest::kFinished, std::memory_order_release);
  request->done(QueueFull(*request, max_queued_), /*on_time=*/true);
}

void AioEngine::Stop() {
  {
    MutexLock lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
    pickup_cv_.NotifyAll();
  }
  // Submitters drain the queue first; no replacement is started once stopping_ is set.
  for (;;) {
    std::unique_ptr<SubmitterSlot> slot;
    {
      MutexLock lock(mu_);
      if (submitters_.empty()) break;
      slot = std::move(submitters_.front());
      submitters_.pop_front();
    }
    slot->thread.Join();
  }
  reaper_.Join();  // returns once every attempt, late ones included, has completed
  {
    MutexLock lock(mu_);
    reaper_done_ = true;
    done_cv_.NotifyAll();
  }
  completer_.Join();
  aio_.Destroy(ctx_);
}

void AioEngine::Finish(std::shared_ptr<IoRequest> request, Status status) {
  const bool on_time = request->Claim(IoRequest::kRunning, IoRequest::kFinished);
  Deliver(std::move(request), std::move(status), on_time);
}

void AioEngine::Deliver(std::shared_ptr<IoRequest> request, Status status, bool on_time) {
  MutexLock lock(mu_);
  // Back-pressure: the completion thread never waits for a deliverer, so this wait ends.
  if (completions_.size() >= static_cast<size_t>(capacity_)) {
    ++stats_.completion_waits;
    while (completions_.size() >= static_cast<size_t>(capacity_)) room_cv_.Wait(mu_);
  }
  completions_.push_back(Completion{std::move(request), std::move(status), on_time});
  stats_.completions_max = std::max<uint64_t>(stats_.completions_max, completions_.size());
  done_cv_.NotifyOne();
}

AioQueueStats AioEngine::queue_stats() {
  MutexLock lock(mu_);
  Tick();
  return stats_;
}

void AioEngine::CheckCounters() const {
  KVCHAOS_ASSERT(pending_ >= 0 && active_ >= 0 && outstanding_ >= 0 && slot_waiters_ >= 0,
                 "aio counters went negative: pending " + std::to_string(pending_) + ", active " +
                     std::to_string(active_) + ", outstanding " + std::to_string(outstanding_));
  KVCHAOS_ASSERT(active_ <= concurrency_, "aio queue depth " + std::to_string(active_) + " is past the " +
                                              std::to_string(concurrency_) + " slots");
  KVCHAOS_ASSERT(pending_ + active_ <= outstanding_ && outstanding_ <= capacity_,
                 "aio attempts: pending " + std::to_string(pending_) + " + active " + std::to_string(active_) +
                     " > outstanding " + std::to_string(outstanding_) + " or past capacity " +
                     std::to_string(capacity_));
  KVCHAOS_ASSERT(static_cast<size_t>(outstanding_) == in_flight_.size(),
                 "aio outstanding " + std::to_string(outstanding_) + " != tracked attempts " +
                     std::to_string(in_flight_.size()));
  KVCHAOS_ASSERT(ready_.size() <= static_cast<size_t>(pending_),
                 "aio prepared attempts " + std::to_string(ready_.size()) + " > pending " + std::to_string(pending_));
  KVCHAOS_ASSERT(queue_.size() <= max_queued_, "aio queue holds " + std::to_string(queue_.size()) +
                                                   " attempts, past its bound " + std::to_string(max_queued_));
  KVCHAOS_ASSERT(completions_.size() <= static_cast<size_t>(capacity_),
                 "aio callback queue holds " + std::to_string(completions_.size()) + " completions, past " +
                     std::to_string(capacity_));
}

void AioEngine::Tick() {
  CheckCounters();
  const MonoTime now = runtime_.Now();
  if (last_tick_ != MonoTime{}) {
    const double dt = std::chrono::duration<double>(now - last_tick_).count();
    const bool waiting = !queue_.empty() || pending_ > 0;  // queued, being prepared or prepared
    if (waiting || active_ > 0) {
      stats_.busy_s += dt;
      stats_.depth_s += dt * active_;
      if (waiting && active_ < concurrency_) {
        stats_.starved_s += dt;
        if (!ready_.empty()) stats_.starved_ready_s += dt;
      }
    }
  }
  last_tick_ = now;
}

void AioEngine::DoneLoop() {
  for (;;) {
    Completion c;
    {
      MutexLock lock(mu_);
      while (completions_.empty() && !reaper_done_) done_cv_.Wait(mu_);
      if (completions_.empty()) return;
      c = std::move(completions_.front());
      completions_.pop_front();
      room_cv_.NotifyOne();
    }
    c.request->done(std::move(c.status), c.on_time);
  }
}

void AioEngine::SubmitterLoop(SubmitterSlot* slot) {
  for (;;) {
    InFlight* raw = nullptr;
    {
      MutexLock lock(mu_);
      while (!((!queue_.empty() && pending_ < kPrepareAhead * concurrency_ && outstanding_ < capacity_) ||
               (stopping_ && queue_.empty()))) {
        pickup_cv_.Wait(mu_);
      }
      if (queue_.empty()) {
        slot->exited = true;
        --live_submitters_;
        return;
      }
      Tick();
      auto flight = std::make_unique<InFlight>();
      raw = flight.get();
      raw->request = std::move(queue_.front());
      queue_.pop_front();
      ++pending_;
      ++outstanding_;
      raw->seq = next_seq_++;
      // The attempt starts executing now: its clock covers the open as well as the I/O.
      raw->request->state.store(IoRequest::kRunning, std::memory_order_release);
      raw->started = runtime_.Now();
      raw->request->deadline = raw->started + raw->request->timeout;
      in_flight_.emplace(raw->seq, std::move(flight));
      slot->busy = true;
      slot->current = raw->seq;
    }
    bool async = false;
    if (Prepare(raw, &async)) Hand(raw, async);  // `raw` may be reaped and gone after this
    MutexLock lock(mu_);
    slot->busy = false;
    if (slot->replaced) {
      --stuck_submitters_;
      slot->exited = true;
      --live_submitters_;
      return;
    }
  }
}

bool AioEngine::Prepare(InFlight* raw, bool* async) {
  const IoRequest& request = *raw->request;
  const bool write = request.direction == IoDirection::kWrite;
  const int flags = (write ? (O_WRONLY | O_CREAT) : O_RDONLY) | (request.io_direct ? O_DIRECT : 0);
  int fd = ops_.Open(request.path, flags, 0644);
  if (fd < 0 && write && errno == ENOENT) {
    if (ops_.Mkdir(request.dir, 0755) == 0 || errno == EEXIST) fd = ops_.Open(request.path, flags, 0644);
  }
  if (fd < 0) {
    const int err = errno;
    FailBeforeKernel(raw, -1,
                     err == ENOENT && !write
                         ? Status(StatusCode::kNotFound, "block file '" + request.path + "' does not exist", err)
                         : IoFailure(request, "open", err));
    return false;
  }
  // A direct write that extends its file is done synchronously inside io_submit (ext4, XFS);
  // with the size reserved first it is an ordinary asynchronous write into allocated space.
  // Filesystems without fallocate keep the extending write.
  bool reserved = false;
  if (write && request.io_direct && request.file_size > 0) {
    if (ops_.Fallocate(fd, 0, request.file_size) == 0) {
      reserved = true;
    } else if (const int err = errno; err != EOPNOTSUPP && err != ENOSYS) {
      FailBeforeKernel(raw, fd, IoFailure(request, "fallocate", err));
      return false;
    }
  }
  *async = request.io_direct && (!write || reserved);
  // Written under mu_ so that the reaper, which takes mu_ before it reads them, is ordered after
  // these writes in the memory model too (the kernel hand-off through io_getevents is not).
  MutexLock lock(mu_);
  raw->fd = fd;
  if (write) {
    io_prep_pwritev(&raw->cb, fd, request.iov.data(), static_cast<int>(request.iov.size()), request.offset);
  } else {
    io_prep_preadv(&raw->cb, fd, request.iov.data(), static_cast<int>(request.iov.size()), request.offset);
  }
  raw->cb.data = raw;
  return true;
}

void AioEngine::Hand(InFlight* raw, bool async) {
  std::vector<InFlight*> batch;
  {
    MutexLock lock(mu_);
    Tick();
    if (raw->timed_out) {
      // Its deadline passed during the open: it goes on, like any late attempt, outside the depth.
      raw->pending = false;
      --pending_;
      batch.push_back(raw);
    } else {
      const MonoTime now = runtime_.Now();
      raw->spent = now - raw->started;
      raw->paused = true;
      if (async) {
        ready_.push_back(raw);
        batch = TakeReady();
      } else {
        ++slot_waiters_;
        while (active_ >= concurrency_) slot_cv_.Wait(mu_);
        --slot_waiters_;
        Tick();
        EnterKernel(raw);
        batch.push_back(raw);
      }
    }
    if (!batch.empty()) {
      ++stats_.submits;
      stats_.submitted += batch.size();
    }
  }
  const size_t left_pending = batch.size();
  SubmitBatch(std::move(batch));
  // Preparers wait for pending_ to drop; waking them only now keeps them off the CPU while this
  // thread still has I/O to hand to the kernel (two cores are common for a storage client).
  for (size_t i = 0; i < left_pending; ++i) pickup_cv_.NotifyOne();
}

std::vector<AioEngine::InFlight*> AioEngine::TakeReady() {
  std::vector<InFlight*> batch;
  while (!ready_.empty() && active_ < concurrency_) {
    InFlight* raw = ready_.front();
    ready_.pop_front();
    EnterKernel(raw);
    batch.push_back(raw);
  }
  return batch;
}

void AioEngine::EnterKernel(InFlight* raw) {
  ++active_;
  raw->in_slot = true;
  raw->paused = false;
  raw->pending = false;
  --pending_;  // the caller wakes a preparer once it has submitted
  // The clock goes on from where the open left it.
  raw->request->deadline = runtime_.Now() + (raw->request->timeout - raw->spent);
}

void AioEngine::FreeSlot(InFlight* raw) {
  if (!raw->in_slot) return;
  raw->in_slot = false;
  --active_;
  if (slot_waiters_ > 0) slot_cv_.NotifyAll();
}

bool AioEngine::MaySubmitAgainAfterEagain(InFlight* raw, int tries) {
  MonoTime deadline{};
  bool timed = false;
  {
    MutexLock lock(mu_);
    if (raw->timed_out) return false;  // reported Timeout already; a late failure ends it
    deadline = raw->request->deadline;
    timed = raw->request->timeout > Duration::zero();
  }
  if (timed ? runtime_.Now() + kEagainPause >= deadline : tries >= kEagainTriesUntimed) return false;
  runtime_.SleepFor(kEagainPause);
  return true;
}

void AioEngine::SubmitBatch(std::vector<InFlight*> batch) {
  size_t first = 0;
  int eagain_tries = 0;  // of batch[first]
  while (first < batch.size()) {
    std::vector<struct iocb*> cbs;
    for (size_t i = first; i < batch.size(); ++i) cbs.push_back(&batch[i]->cb);
    // After this call the submitted attempts belong to the reaper: only batch[first + r...] is ours.
    const int r = aio_.Submit(ctx_, static_cast<long>(cbs.size()), cbs.data());
    if (r > 0) {
      first += static_cast<size_t>(r);
      eagain_tries = 0;
      continue;
    }
    InFlight* failed = batch[first];
    const int err = r < 0 ? -r : EAGAIN;  // 0 taken: the kernel had no room
    if (err == EAGAIN && MaySubmitAgainAfterEagain(failed, ++eagain_tries)) continue;
    ++first;
    eagain_tries = 0;
    // Every other io_submit error (EINVAL, EBADF, …), and EAGAIN that outlasted the attempt, is a
    // failure of the path: the shard is retried on the next one.
    FailBeforeKernel(failed, failed->fd, IoFailure(*failed->request, "io_submit", err));
  }
}

void AioEngine::FailBeforeKernel(InFlight* raw, int fd, Status status) {
  std::unique_ptr<InFlight> flight;
  {
    MutexLock lock(mu_);
    Tick();
    auto it = in_flight_.find(raw->seq);
    flight = std::move(it->second);
    in_flight_.erase(it);
    FreeSlot(flight.get());
    if (flight->pending) --pending_;
    --outstanding_;
    pickup_cv_.NotifyOne();
  }
  if (fd >= 0) ops_.Close(fd);
  Finish(flight->request, std::move(status));  // late (on_time false) when the deadline came first
}

bool AioEngine::NeedsDataSync(const InFlight& flight, long res) const {
  const IoRequest& request = *flight.request;
  // A late write (past its deadline) is reported as it is: its shard was retried elsewhere.
  return request.durable && request.direction == IoDirection::kWrite && !flight.syncing && !flight.timed_out &&
         res >= 0 && static_cast<size_t>(res) == request.length;
}

void AioEngine::ReapLoop() {
  std::vector<struct io_event> events(64);
  std::vector<std::pair<std::unique_ptr<InFlight>, long>> reaped;  // with the event's result
  for (;;) {
    struct timespec poll {0, std::chrono::duration_cast<std::chrono::nanoseconds>(kReapPoll).count()};
    const int n = aio_.GetEvents(ctx_, 1, static_cast<long>(events.size()), events.data(), &poll);
    reaped.clear();
    std::vector<InFlight*> refill;
    std::vector<InFlight*> to_sync;
    {
      MutexLock lock(mu_);
      Tick();
      for (int i = 0; i < n; ++i) {
        auto it = in_flight_.find(static_cast<InFlight*>(events[i].data)->seq);
        InFlight& flight = *it->second;
        const long res = static_cast<long>(events[i].res);
        if (NeedsDataSync(flight, res)) {
          // Its data is written: the same attempt, slot and deadline go on with the data sync.
          flight.syncing = true;
          io_prep_fdsync(&flight.cb, flight.fd);
          flight.cb.data = &flight;
          to_sync.push_back(&flight);
          continue;
        }
        reaped.emplace_back(std::move(it->second), res);
        in_flight_.erase(it);
        FreeSlot(reaped.back().first.get());
        --outstanding_;
      }
      if (!to_sync.empty()) {
        ++stats_.submits;
        stats_.submitted += to_sync.size();
      }
      // Refill first: the slots these completions freed go to prepared attempts before any file is
      // closed or any callback queued, so the kernel queue stays full (fio's loop: reap, submit).
      refill = TakeReady();
      if (!refill.empty()) {
        ++stats_.submits;
        stats_.submitted += refill.size();
      }
    }
    const size_t entered = refill.size();
    SubmitBatch(std::move(to_sync));
    SubmitBatch(std::move(refill));
    for (size_t i = 0; i < entered + (n > 0 ? 1 : 0); ++i) pickup_cv_.NotifyOne();
    for (auto& [flight, res] : reaped) {
      const IoRequest& request = *flight->request;
      Status status;
      const char* op = flight->syncing ? "fdatasync" : request.direction == IoDirection::kWrite ? "write" : "read";
      if (res < 0) {
        status = IoFailure(request, op, static_cast<int>(-res));
      } else if (!flight->syncing && static_cast<size_t>(res) != request.length) {
        status = ShortTransfer(request, static_cast<size_t>(res));
      }
      if (ops_.Close(flight->fd) != 0 && status.ok()) status = IoFailure(request, "close", errno);
      Finish(flight->request, std::move(status));
    }
    // Deadlines: report the attempts that ran too long; they go on until the kernel ends them, and a
    // submitter stuck in one (in open, or in an io_submit the kernel runs synchronously) is replaced.
    // Then fill the slots freed by completions and timeouts from the prepared attempts.
    std::vector<std::shared_ptr<IoRequest>> expired;
    std::vector<InFlight*> batch;
    bool done = false;
    {
      MutexLock lock(mu_);
      Tick();
      const MonoTime now = runtime_.Now();
      for (auto& [key, flight] : in_flight_) {
        IoRequest& request = *flight->request;
        if (flight->timed_out || flight->paused || request.timeout <= Duration::zero() || now < request.deadline) continue;
        if (!request.Claim(IoRequest::kRunning, IoRequest::kTimedOut)) continue;
        flight->timed_out = true;
        FreeSlot(flight.get());
        expired.push_back(flight->request);
        for (auto& slot : submitters_) {
          if (!slot->busy || slot->current != flight->seq) continue;
          if (!slot->replaced && !stopping_ && stuck_submitters_ < max_stuck_) {
            slot->replaced = true;
            ++stuck_submitters_;
            SpawnSubmitter();
          }
          break;
        }
      }
      batch = TakeReady();
      if (!batch.empty()) {
        ++stats_.submits;
        stats_.submitted += batch.size();
      }
      done = stopping_ && live_submitters_ == 0 && outstanding_ == 0;
    }
    const size_t late_entered = batch.size();
    SubmitBatch(std::move(batch));
    for (size_t i = 0; i < late_entered; ++i) pickup_cv_.NotifyOne();
    for (auto& request : expired) {
      Deliver(request, Status::Timeout("backend '" + request->backend + "': " +
                                    (request->direction == IoDirection::kWrite ? "write" : "read") + "('" +
                                    request->path + "') did not finish within " +
                                    std::to_string(ToMillis(request->timeout)) + " ms"),
              /*on_time=*/true);
    }
    if (done) return;
  }
}

}  // namespace kvchaos::store
