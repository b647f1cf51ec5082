// IoEngine: runs single I/O attempts — one shard of one block on one backend — and enforces the
// per-attempt timeout. The retry policy lives above it (transfer.h); an engine only promises:
//   - the attempt's timeout runs from when the attempt starts executing (a worker picks it up, or
//     it is submitted to the kernel), never from when it was queued;
//   - `done(status, /*on_time=*/true)` is called exactly once: with the result, or with Timeout at
//     the deadline; in the second case, `done(result, /*on_time=*/false)` follows when the I/O
//     really ends (the kernel call is never cancelled). Late calls must touch only the attempt's
//     own buffers, which the request keeps alive through `keepalive`.
// A durable write (IoRequest::durable) syncs its data before it reports success, within the same
// attempt and deadline. A read that finds fewer bytes than it asked for is a miss (ShortTransfer).
// Two engines: psync (a thread pool doing pread/pwrite) and aio (libaio, O_DIRECT).
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos::store {

enum class IoDirection { kRead, kWrite };

struct IoRequest {
  IoDirection direction = IoDirection::kRead;
  std::string backend;   // for messages
  std::string path;      // the file (block file for reads, its .tmp for writes)
  std::string dir;       // parent directory, created on ENOENT for writes
  bool io_direct = false;
  off_t offset = 0;
  size_t length = 0;     // sum of iov lengths
  off_t file_size = 0;   // writes: the block file's final size (an engine may reserve it up front)
  std::vector<iovec> iov;
  std::shared_ptr<void> keepalive;  // owns the buffers iov points into, when they are the attempt's
  Duration timeout{0};              // 0: no per-attempt timeout
  bool durable = false;             // writes: the data is made durable before success is reported
  std::function<void(Status status, bool on_time)> done;

  // Engine bookkeeping: who reported first, the attempt's outcome or its deadline.
  enum State : int { kQueued, kRunning, kFinished, kTimedOut };
  std::atomic<int> state{kQueued};
  MonoTime deadline{};
  // Claims the on-time report; false when the other side already did.
  bool Claim(State from, State to) {
    int expected = from;
    return state.compare_exchange_strong(expected, to, std::memory_order_acq_rel);
  }
};

class IoEngine {
 public:
  // Attempts an engine queues for pickup unless told otherwise: PosixStore admits no more shards
  // than its max_inflight_shards and gives the engines that bound, so it is never reached there.
  static constexpr size_t kDefaultMaxQueued = 65536;

  virtual ~IoEngine() = default;
  // Queues the attempt; never blocks on I/O. With the queue full (max_queued attempts waiting for
  // pickup) the attempt is refused at once: done(QueueFull(...), /*on_time=*/true), an Unavailable
  // that is no backend's fault (IsQueueFull).
  virtual void Submit(std::shared_ptr<IoRequest> request) = 0;
  // Stops taking work and waits for every attempt, late ones included, to end.
  virtual void Stop() = 0;
};

// The refusal of an attempt by a full engine queue, and how callers tell it from a backend error.
Status QueueFull(const IoRequest& request, size_t max_queued);
bool IsQueueFull(const Status& status);

// "backend '/p1': read('/p1/0a3/….') failed" with the errno in the Status.
Status IoFailure(const IoRequest& request, const char* op, int err);
// An attempt that moved `transferred` of its `length` bytes. A short read is NotFound — the block
// file is shorter than the block (truncated, or left half-written by a crash): a cache miss, as
// upstream, never a health sample; a short write is an IoError.
Status ShortTransfer(const IoRequest& request, size_t transferred);

}  // namespace kvchaos::store
