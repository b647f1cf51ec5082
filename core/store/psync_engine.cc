// PsyncEngine: thread-pool attempts with deadline supervision (see psync_engine.h).
#include "core/store/psync_engine.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>

namespace kvchaos::store {

Status IoFailure(const IoRequest& request, const char* op, int err) {
  return Status::IoError("backend '" + request.backend + "': " + op + "('" + request.path + "') failed", err);
}

Status ShortTransfer(const IoRequest& request, size_t transferred) {
  const std::string what = std::to_string(transferred) + " of " + std::to_string(request.length) + " bytes at offset " +
                           std::to_string(request.offset);
  if (request.direction == IoDirection::kRead) {
    return Status::NotFound("block file '" + request.path + "' is shorter than the block (read " + what +
                            "): truncated or never completed, a miss");
  }
  return Status::IoError("backend '" + request.backend + "': write('" + request.path + "') transferred " + what, EIO);
}

namespace {
constexpr std::string_view kQueueFullPrefix = "I/O engine queue full: ";
}  // namespace

Status QueueFull(const IoRequest& request, size_t max_queued) {
  return Status::Unavailable(std::string(kQueueFullPrefix) + std::to_string(max_queued) +
                             " attempts already wait for a worker; " +
                             (request.direction == IoDirection::kWrite ? "write" : "read") + " of '" + request.path +
                             "' refused (the store admits at most max_inflight_shards shards)");
}

bool IsQueueFull(const Status& status) {
  return status.code() == StatusCode::kUnavailable && status.message().starts_with(kQueueFullPrefix);
}

struct PsyncEngine::WorkerSlot {
  Thread thread;
  bool exited = false;           // guarded by the engine's mu_
  std::shared_ptr<IoRequest> current;  // guarded by the engine's mu_
  bool replaced = false;         // a replacement was started for it: exit after this attempt
};

PsyncEngine::PsyncEngine(Runtime& runtime, FileOps& ops, int concurrency, size_t max_queued)
    : runtime_(runtime),
      ops_(ops),
      concurrency_(concurrency),
      max_queued_(std::max<size_t>(1, max_queued)),
      max_stuck_(4 * concurrency),
      mu_(runtime),
      work_cv_(runtime),
      timer_cv_(runtime) {
  {
    MutexLock lock(mu_);
    for (int i = 0; i < concurrency_; ++i) SpawnWorker();
  }
  timer_ = runtime_.Spawn("ucm_psync_tmr", [this] { TimerLoop(); });
}

PsyncEngine::~PsyncEngine() { Stop(); }

void PsyncEngine::SpawnWorker() {
  // Join the workers that already left (they exited after a late attempt).
  for (auto it = workers_.begin(); it != workers_.end();) {
    if ((*it)->exited) {
      (*it)->thread.Join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
  auto slot = std::make_unique<WorkerSlot>();
  WorkerSlot* raw = slot.get();
  workers_.push_back(std::move(slot));
  raw->thread = runtime_.Spawn("ucm_psync_io", [this, raw] { WorkerLoop(raw); });
}

void PsyncEngine::Submit(std::shared_ptr<IoRequest> request) {
  {
    MutexLock lock(mu_);
    if (queue_.size() < max_queued_) {
      queue_.push_back(std::move(request));
      work_cv_.NotifyOne();
      return;
    }
  }
  request->state.store(IoRequest::kFinished, std::memory_order_release);
  request->done(QueueFull(*request, max_queued_), /*on_time=*/true);
}

void PsyncEngine::Stop() {
  std::list<std::unique_ptr<WorkerSlot>> workers;
  {
    MutexLock lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    work_cv_.NotifyAll();
    timer_cv_.NotifyAll();
  }
  timer_.Join();
  // Workers finish the queue first (the store waits for its tasks before stopping anyway).
  for (;;) {
    std::unique_ptr<WorkerSlot> slot;
    {
      MutexLock lock(mu_);
      if (workers_.empty()) break;
      slot = std::move(workers_.front());
      workers_.pop_front();
    }
    slot->thread.Join();
  }
}

void PsyncEngine::WorkerLoop(WorkerSlot* slot) {
  for (;;) {
    std::shared_ptr<IoRequest> request;
    {
      MutexLock lock(mu_);
      while (queue_.empty() && !stopping_) work_cv_.Wait(mu_);
      if (queue_.empty()) {
        slot->exited = true;
        return;
      }
      request = std::move(queue_.front());
      queue_.pop_front();
      request->state.store(IoRequest::kRunning, std::memory_order_release);
      if (request->timeout > Duration::zero()) {
        request->deadline = runtime_.Now() + request->timeout;
        deadlines_.emplace(request->deadline, request);
        timer_cv_.NotifyAll();
      }
      slot->current = request;
    }
    Execute(*request);
    MutexLock lock(mu_);
    slot->current.reset();
    if (slot->replaced) {
      --stuck_workers_;
      slot->exited = true;
      return;
    }
  }
}

void PsyncEngine::Execute(IoRequest& request) {
  const bool write = request.direction == IoDirection::kWrite;
  const int flags = (write ? (O_WRONLY | O_CREAT) : O_RDONLY) | (request.io_direct ? O_DIRECT : 0);
  Status status;
  int fd = ops_.Open(request.path, flags, 0644);
  if (fd < 0 && write && errno == ENOENT) {
    if (ops_.Mkdir(request.dir, 0755) == 0 || errno == EEXIST) fd = ops_.Open(request.path, flags, 0644);
  }
  if (fd < 0) {
    const int err = errno;
    status = err == ENOENT && !write ? Status(StatusCode::kNotFound, "block file '" + request.path + "' does not exist", err)
                                     : IoFailure(request, "open", err);
  } else {
    const ssize_t n = write ? ops_.Pwritev(fd, request.iov.data(), static_cast<int>(request.iov.size()), request.offset)
                            : ops_.Preadv(fd, request.iov.data(), static_cast<int>(request.iov.size()), request.offset);
    if (n < 0) {
      status = IoFailure(request, write ? "write" : "read", errno);
    } else if (static_cast<size_t>(n) != request.length) {
      status = ShortTransfer(request, static_cast<size_t>(n));
    } else if (write && request.durable && ops_.Fdatasync(fd) != 0) {
      status = IoFailure(request, "fdatasync", errno);
    }
    if (ops_.Close(fd) != 0 && status.ok()) status = IoFailure(request, "close", errno);
  }
  if (request.Claim(IoRequest::kRunning, IoRequest::kFinished)) {
    if (request.timeout > Duration::zero()) {
      MutexLock lock(mu_);
      auto range = deadlines_.equal_range(request.deadline);
      for (auto it = range.first; it != range.second; ++it) {
        if (it->second.get() == &request) {
          deadlines_.erase(it);
          break;
        }
      }
    }
    request.done(std::move(status), /*on_time=*/true);
  } else {
    request.done(std::move(status), /*on_time=*/false);
  }
}

void PsyncEngine::TimerLoop() {
  MutexLock lock(mu_);
  while (!stopping_) {
    if (deadlines_.empty()) {
      timer_cv_.Wait(mu_);
      continue;
    }
    const MonoTime next = deadlines_.begin()->first;
    if (runtime_.Now() < next) {
      timer_cv_.WaitUntil(mu_, next);
      continue;
    }
    std::shared_ptr<IoRequest> request = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    if (!request->Claim(IoRequest::kRunning, IoRequest::kTimedOut)) continue;
    // The worker is stuck in the kernel: let a replacement take the queue meanwhile.
    for (auto& slot : workers_) {
      if (slot->current == request && !slot->replaced && stuck_workers_ < max_stuck_) {
        slot->replaced = true;
        ++stuck_workers_;
        SpawnWorker();
        break;
      }
    }
    mu_.Unlock();
    request->done(Status::Timeout("backend '" + request->backend + "': " +
                                  (request->direction == IoDirection::kWrite ? "write" : "read") + "('" +
                                  request->path + "') did not finish within " +
                                  std::to_string(ToMillis(request->timeout)) + " ms"),
                  /*on_time=*/true);
    mu_.Lock();
  }
}

}  // namespace kvchaos::store
