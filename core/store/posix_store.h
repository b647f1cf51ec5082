// PosixStore: a block store over several POSIX paths that reach the same data (mounts of one
// shared file system, say), which keeps serving while some of the paths fail. Implements
// upstream's "Posix Store multi-backend probing and high availability":
//
//   store::PosixStoreConfig config;                    // or store::LoadStoreConfig("store.yaml")
//   config.storage_backends = {"/mnt/p0", "/mnt/p1"};
//   store::PosixStore store;                            // real OS, real Runtime
//   Status s = store.Setup(config);                     // probes every path; any failure aborts
//   auto handle = store.Dump({{{id, 0, {buffer}}}});    // shard 0 of block `id`
//   s = store.Wait(*handle);
//
// - Setup normalises the config, runs the 4 KiB write/read/verify/close/cleanup probe on every
//   path (the first failure aborts with the path, the operation, the file and the errno text),
//   makes every shard directory of the layout on every path (shard_dirs_at_setup, as upstream;
//   no directory is ever removed, a peer may be using it), then starts the I/O engine (aio or
//   psync) and the recovery monitor `ucm_health_pmon`.
// - Every block has a fixed route: primary = BlockIdHasher(id) % n over all configured paths,
//   then forward with wrap-around past unavailable paths (backend_set.h). Reads, writes, lookups,
//   commits and removes all follow it, so a block returns to its primary after recovery.
// - Business I/O is the only failure detector (passive feedback); the monitor probes only excluded
//   paths and readmits one after a full window of successes (health_window.h).
// - Per-attempt timeout: max(1 ms, timeout_ms / n) from the attempt's start (0 disables); a failed
//   or timed-out attempt is retried on the next path, so a shard gets at most n attempts — the
//   whole timeout_ms — once it runs; time spent queued is never counted against a path. Late
//   completions never touch caller memory. Metadata calls (open, mkdir, rename, stat, unlink) are
//   synchronous (as upstream); an attempt's open counts against its timeout on both engines, the
//   commit rename and lookups, removes are not bounded by it.
// - durable_commit: a write attempt syncs its data before it succeeds, and a block's task ends
//   only once the directory of its rename is synced too (DirectorySyncer: one fsync per shard
//   directory per group of blocks committing together). Off (the default, upstream's cache
//   semantics), a power loss may lose acknowledged blocks or leave their files empty or short:
//   reads of those are misses (NotFound, no health sample), never data returned as good.
// - A block's `.tmp` is committed by rename; temp files that will never be committed (a failed
//   attempt's, one that completes after its timeout, those of a block whose commit failed) are
//   removed once no attempt of the block runs (temp_files.h: what can still remain, and why).
// - store_health.enabled switches only the outer breaker (HealthBreakerStore); the startup check,
//   passive feedback and recovery always run.
// - Bounded: at most max_inflight_shards shards of admitted tasks are queued or in I/O, and at most
//   max_pending_tasks handles are out and not yet Waited; a Dump or Load past either is refused
//   with Unavailable (nothing started), so a caller that floods the store or never waits gets an
//   error instead of growing the engine queue or the task map without limit.
// - CheckHealth reads the published availability snapshot only; routing reads are lock-free.
// Thread-safe: any number of threads may call every method concurrently after Setup.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/store/aio_engine.h"
#include "core/store/backend_set.h"
#include "core/store/buffer_pool.h"
#include "core/store/directory_syncer.h"
#include "core/store/file_ops.h"
#include "core/store/health_monitor.h"
#include "core/store/io_engine.h"
#include "core/store/store.h"
#include "core/store/store_config.h"
#include "core/store/temp_files.h"

namespace kvchaos::store {

class Transfer;

// Bugs the simulator plants in the store to prove its checkers catch them. All off in production,
// and settable only in code.
struct StoreTestingKnobs {
  // Read attempts read straight into the caller's buffers even when an attempt may time out, so a
  // late completion writes into memory the caller already has back.
  bool late_reads_into_caller_buffers = false;
  // Failures never count in a path's health window: a failing path is never excluded.
  bool health_never_trips = false;
};

// What the store talks to; tests and the simulator replace parts of it.
struct PosixStoreDeps {
  Runtime* runtime = &Runtime::Real();
  FileOps* file_ops = &FileOps::Real();
  AioOps* aio_ops = &AioOps::Real();
  // Seeds the startup probes' temp file names. nullopt: the pid and the wall clock, so processes
  // sharing a storage never collide; the simulator passes its run's seed (a seed replays).
  std::optional<uint64_t> probe_seed;
  StoreTestingKnobs testing;
};

struct BackendStatus {
  std::string path;
  bool available = false;
  int window_count = 0;     // results in the window
  int window_failures = 0;  // failures among them
  BackendIoCounts io;       // errors by errno, attempt timeouts, late completions, retries
};

class PosixStore final : public Store {
 public:
  explicit PosixStore(PosixStoreDeps deps = {});
  // Waits for outstanding tasks' attempts (late ones included) and joins every thread; a shard that
  // fails meanwhile is not retried on another path (its task ends with the error).
  ~PosixStore() override;
  PosixStore(const PosixStore&) = delete;
  PosixStore& operator=(const PosixStore&) = delete;

  // Validates a copy of `config`, probes every path and starts. Once per store.
  Status Setup(const PosixStoreConfig& config);

  Result<std::vector<bool>> Lookup(std::span<const BlockId> ids) override;
  Result<TaskHandle> Dump(TransferTask task) override;
  Result<TaskHandle> Load(TransferTask task) override;
  Status Wait(TaskHandle handle) override;
  Status CheckHealth() override;
  Status Remove(std::span<const BlockId> ids) override;
  // Stats the block file on the block's primary path, where every read of it goes first while
  // that path is available: missing or shorter than block_size is kLost; a primary that is
  // unavailable (a fallback path may hold the block on separate storage) or a stat that fails
  // otherwise is kUnknown. No health samples (not business I/O).
  void Abandon(std::span<const BlockId> ids) override;
  Result<std::vector<BlockPresence>> Presence(std::span<const BlockId> ids,
                                              std::span<const uint8_t> inline_header = {}) override;
  // The config's block_size and shard_size once Setup succeeded.
  std::optional<BlockGeometry> Geometry() const override {
    if (!set_up_) return std::nullopt;
    return BlockGeometry{config_.block_size, config_.shard_size};
  }

  // The config's concurrency once Setup succeeded (1 before).
  int Concurrency() const override { return set_up_ ? config_.concurrency : 1; }

  // Introspection (valid after a successful Setup).
  const PosixStoreConfig& config() const { return config_; }
  BackendSet& backends() { return *backends_; }
  std::vector<BackendStatus> BackendStates() const;
  std::vector<HealthTransition> Transitions() const { return backends_->Transitions(); }
  // max(1 ms, timeout_ms / n), or 0 when timeouts are off.
  Duration attempt_timeout() const { return attempt_timeout_; }
  HealthMonitor& monitor() { return *monitor_; }
  // Blocks whose temp files are still tracked (tests: 0 once all attempts, late ones too, ended).
  size_t tracked_temp_blocks() { return temp_files_ ? temp_files_->tracked() : 0; }
  // How full the aio engine kept the kernel queue so far; nullopt with the psync engine.
  std::optional<AioQueueStats> aio_queue_stats();
  // The group commit of directory fsyncs; null unless durable_commit.
  DirectorySyncer* dir_syncer() { return dir_syncer_.get(); }

  // The per-attempt timeout rule, for callers and tests.
  static Duration AttemptTimeout(int64_t timeout_ms, size_t backend_count);

 private:
  Result<TaskHandle> Submit(IoDirection direction, TransferTask task);
  // Takes `shards` of the max_inflight_shards budget, or says why not.
  Status Admit(size_t shards);
  Status ValidateTask(const TransferTask& task) const;
  Status Probe(int backend);

  PosixStoreDeps deps_;
  PosixStoreConfig config_;
  bool set_up_ = false;
  Duration attempt_timeout_{0};
  uint64_t probe_token_base_ = 0;
  std::atomic<uint64_t> probe_counter_{0};
  std::unique_ptr<BackendSet> backends_;
  std::shared_ptr<BufferPool> buffers_;
  std::unique_ptr<TempFiles> temp_files_;  // before engine_: late completions use it until Stop
  std::unique_ptr<DirectorySyncer> dir_syncer_;  // before engine_: commits hand it work until Stop
  std::unique_ptr<IoEngine> engine_;
  std::unique_ptr<HealthMonitor> monitor_;
  Mutex tasks_mu_;
  uint64_t next_handle_ GUARDED_BY(tasks_mu_) = 1;
  std::map<TaskHandle, std::shared_ptr<Transfer>> tasks_ GUARDED_BY(tasks_mu_);  // at most max_pending_tasks
  int64_t reserved_tasks_ GUARDED_BY(tasks_mu_) = 0;  // handles being set up by Submit
  std::atomic<int64_t> inflight_shards_{0};  // admitted shards whose I/O has not finished
  std::atomic<bool> closing_{false};         // the destructor began: failed shards are not retried
};

}  // namespace kvchaos::store
