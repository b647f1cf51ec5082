// PosixStore: setup, the public API and the metadata operations (see posix_store.h).
#include "core/store/posix_store.h"

#include <unistd.h>

#include <cerrno>

#include <spdlog/spdlog.h>

#include "core/common/rng.h"
#include "core/store/probe.h"
#include "core/store/psync_engine.h"
#include "core/store/transfer.h"

namespace kvchaos::store {
namespace {

// Every shard directory of the layout, as upstream makes them at setup: an upstream peer checks
// that each exists (and is writable) on its other paths before it starts.
Status MakeShardDirs(FileOps& ops, const std::string& backend, int shard_width) {
  for (const std::string& name : ShardDirNames(shard_width)) {
    const std::string dir = backend + "/" + name;
    if (ops.Mkdir(dir, 0755) != 0 && errno != EEXIST) {
      return Status::IoError("backend '" + backend + "': mkdir('" + dir + "') failed", errno);
    }
  }
  return Status::Ok();
}

}  // namespace

Duration PosixStore::AttemptTimeout(int64_t timeout_ms, size_t backend_count) {
  if (timeout_ms <= 0 || backend_count == 0) return Duration::zero();
  const Duration per_attempt = Millis(timeout_ms) / static_cast<int64_t>(backend_count);
  return std::max<Duration>(per_attempt, Millis(1));
}

PosixStore::PosixStore(PosixStoreDeps deps) : deps_(deps), tasks_mu_(*deps.runtime) {}

PosixStore::~PosixStore() {
  closing_.store(true, std::memory_order_release);  // before anything waits for the attempts
  // Stop recovery first, then the engine: it returns once every attempt, late ones included, ended;
  // then the directory syncer, which answers the commits those attempts handed it.
  if (monitor_) monitor_->Stop();
  if (engine_) engine_->Stop();
  if (dir_syncer_) dir_syncer_->Stop();
}

Status PosixStore::Probe(int backend) {
  const uint64_t token = Mix64(probe_token_base_ ^ probe_counter_.fetch_add(1, std::memory_order_relaxed));
  return RunSmallIoProbe(*deps_.file_ops, backends_->path(backend), config_.io_direct, token,
                         config_.data_dir_shard_bytes);
}

Status PosixStore::Setup(const PosixStoreConfig& config) {
  if (set_up_) return Status::InvalidArgument("PosixStore::Setup called twice");
  PosixStoreConfig cfg = config;
  KVCHAOS_RETURN_IF_ERROR(cfg.NormalizeAndValidate());
  Runtime& rt = *deps_.runtime;
  // Probe names must differ between processes sharing the storage: mix the pid and the clock in.
  probe_token_base_ = deps_.probe_seed ? Mix64(*deps_.probe_seed)
                                       : Mix64(static_cast<uint64_t>(::getpid()) << 32 ^
                                               static_cast<uint64_t>(rt.WallNow().time_since_epoch().count()));
  config_ = cfg;
  backends_ = std::make_unique<BackendSet>(rt, cfg.storage_backends, cfg.health.health_window_size,
                                           cfg.health.failure_threshold, deps_.testing.health_never_trips);
  for (int i = 0; i < backends_->size(); ++i) {
    Status s = Probe(i);
    if (!s.ok()) {
      spdlog::error("store setup: startup check failed: {}", s.ToString());
      backends_.reset();
      return s.WithContext("store setup: startup check failed");
    }
  }
  // After every path passed its check, so a setup that fails leaves no layout behind.
  for (int i = 0; i < backends_->size() && cfg.shard_dirs_at_setup; ++i) {
    Status s = MakeShardDirs(*deps_.file_ops, backends_->path(i), cfg.data_dir_shard_bytes);
    if (!s.ok()) {
      spdlog::error("store setup: {}", s.ToString());
      backends_.reset();
      return s.WithContext("store setup: making the shard directories");
    }
  }
  attempt_timeout_ = AttemptTimeout(cfg.timeout_ms, cfg.storage_backends.size());
  // Enough idle buffers for a full queue of attempts plus the saved copies of the tasks behind it.
  buffers_ = BufferPool::Create(rt, 2 * static_cast<size_t>(cfg.concurrency));
  temp_files_ = std::make_unique<TempFiles>(rt, *deps_.file_ops);
  if (cfg.durable_commit) dir_syncer_ = std::make_unique<DirectorySyncer>(rt, *deps_.file_ops, *backends_);
  if (cfg.io_engine == IoEngineKind::kAio) {
    Result<std::unique_ptr<AioEngine>> aio = AioEngine::Create(rt, *deps_.file_ops, *deps_.aio_ops, cfg.concurrency,
                                                               static_cast<size_t>(cfg.max_inflight_shards));
    if (!aio.ok()) {
      dir_syncer_.reset();
      backends_.reset();
      return aio.status().WithContext("store setup");
    }
    engine_ = std::move(*aio);
  } else {
    engine_ = std::make_unique<PsyncEngine>(rt, *deps_.file_ops, cfg.concurrency,
                                            static_cast<size_t>(cfg.max_inflight_shards));
  }
  const auto seconds = [](double s) { return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s)); };
  monitor_ = std::make_unique<HealthMonitor>(rt, *backends_, [this](int backend) { return Probe(backend); },
                                             seconds(cfg.health.health_check_interval_s),
                                             seconds(cfg.health.health_check_timeout_s), cfg.cpu_affinity);
  monitor_->Start();
  set_up_ = true;
  for (const std::string& warning : SameDirectoryWarnings(cfg.storage_backends)) spdlog::warn("store setup: {}", warning);
  if (cfg.posix_gc_enable) {
    spdlog::warn("store setup: posix_gc_enable: kvchaos does no capacity GC (blocks go only by Remove); "
                 "an upstream peer's GC may still remove blocks, which then read as misses");
  }
  spdlog::info("store ready: {} backends, engine {}, io_direct {}, durable_commit {}, attempt timeout {} ms",
               backends_->size(), cfg.io_engine == IoEngineKind::kAio ? "aio" : "psync", cfg.io_direct,
               cfg.durable_commit, ToMillis(attempt_timeout_));
  return Status::Ok();
}

Status PosixStore::ValidateTask(const TransferTask& task) const {
  if (!set_up_) return Status::InvalidArgument("PosixStore used before a successful Setup");
  for (size_t i = 0; i < task.shards.size(); ++i) {
    const Shard& shard = task.shards[i];
    const uint64_t last = config_.shards_per_block() - (task.inline_header ? 0 : 1);
    if (shard.index > last) {
      return Status::InvalidArgument("shards[" + std::to_string(i) + "].index: " + std::to_string(shard.index) +
                                     " is past the last shard of a block (" + std::to_string(last) +
                                     (task.inline_header ? ", its inline header)" : ")"));
    }
    const bool header = task.inline_header && shard.index == last;
    const uint64_t want = header ? kInlineHeaderBytes : config_.shard_size;
    uint64_t bytes = 0;
    for (const auto& b : shard.buffers) bytes += b.size();
    if (bytes != want) {
      return Status::InvalidArgument("shards[" + std::to_string(i) + "].buffers: " + std::to_string(bytes) +
                                     " bytes in total, want " + (header ? "the inline header's " : "shard_size ") +
                                     std::to_string(want));
    }
  }
  return Status::Ok();
}

Status PosixStore::Admit(size_t shards) {
  const int64_t want = static_cast<int64_t>(shards);
  if (want > config_.max_inflight_shards) {
    return Status::InvalidArgument("task has " + std::to_string(shards) + " shards, more than max_inflight_shards (" +
                                   std::to_string(config_.max_inflight_shards) + "); split it");
  }
  int64_t now = inflight_shards_.load(std::memory_order_acquire);
  do {
    if (now + want > config_.max_inflight_shards) {
      return Status::Unavailable("store busy: " + std::to_string(now) + " shards in flight, " + std::to_string(shards) +
                                 " more would pass max_inflight_shards (" +
                                 std::to_string(config_.max_inflight_shards) + "); wait for earlier tasks and retry");
    }
  } while (!inflight_shards_.compare_exchange_weak(now, now + want, std::memory_order_acq_rel));
  return Status::Ok();
}

Result<TaskHandle> PosixStore::Submit(IoDirection direction, TransferTask task) {
  KVCHAOS_RETURN_IF_ERROR(ValidateTask(task));
  // The handle's place first, so a refused task never started any I/O.
  {
    MutexLock lock(tasks_mu_);
    if (static_cast<int64_t>(tasks_.size()) + reserved_tasks_ >= config_.max_pending_tasks) {
      return Status::Unavailable("store has " + std::to_string(tasks_.size() + static_cast<size_t>(reserved_tasks_)) +
                                 " task handles not yet waited on (max_pending_tasks " +
                                 std::to_string(config_.max_pending_tasks) + "): Wait for them first");
    }
    ++reserved_tasks_;
  }
  if (Status admitted = Admit(task.shards.size()); !admitted.ok()) {
    MutexLock lock(tasks_mu_);
    --reserved_tasks_;
    return admitted;
  }
  TransferContext ctx;
  ctx.runtime = deps_.runtime;
  ctx.backends = backends_.get();
  ctx.engine = engine_.get();
  ctx.file_ops = deps_.file_ops;
  ctx.temp_files = temp_files_.get();
  ctx.dir_syncer = dir_syncer_.get();
  ctx.buffers = buffers_;
  ctx.shard_size = config_.shard_size;
  ctx.shards_per_block = config_.shards_per_block();
  ctx.inline_header = task.inline_header;
  ctx.shard_width = config_.data_dir_shard_bytes;
  ctx.io_direct = config_.io_direct;
  ctx.engine_needs_alignment = config_.io_engine == IoEngineKind::kAio && config_.io_direct;
  ctx.attempt_timeout = attempt_timeout_;
  ctx.inflight_shards = &inflight_shards_;
  ctx.reads_into_caller_buffers = deps_.testing.late_reads_into_caller_buffers;
  ctx.closing = &closing_;
  std::shared_ptr<Transfer> transfer = Transfer::Start(ctx, direction, std::move(task));
  MutexLock lock(tasks_mu_);
  --reserved_tasks_;
  const TaskHandle handle = next_handle_++;
  tasks_.emplace(handle, std::move(transfer));
  return handle;
}

Result<TaskHandle> PosixStore::Dump(TransferTask task) { return Submit(IoDirection::kWrite, std::move(task)); }
Result<TaskHandle> PosixStore::Load(TransferTask task) { return Submit(IoDirection::kRead, std::move(task)); }

Status PosixStore::Wait(TaskHandle handle) {
  std::shared_ptr<Transfer> transfer;
  {
    MutexLock lock(tasks_mu_);
    auto it = tasks_.find(handle);
    if (it == tasks_.end()) return Status::InvalidArgument("unknown task handle " + std::to_string(handle));
    transfer = std::move(it->second);
    tasks_.erase(it);
  }
  return transfer->Wait();
}

Status PosixStore::CheckHealth() {
  if (!set_up_) return Status::StoreUnhealthy("store is not set up");
  if (backends_->any_available()) return Status::Ok();
  return Status::StoreUnhealthy("no storage backend is available");
}

Result<std::vector<bool>> PosixStore::Lookup(std::span<const BlockId> ids) {
  if (!set_up_) return Status::InvalidArgument("PosixStore used before a successful Setup");
  std::vector<bool> found(ids.size(), false);
  FileOps& ops = *deps_.file_ops;
  for (size_t i = 0; i < ids.size(); ++i) {
    Status s = CallOnRoute(*backends_, BlockIdHasher{}(ids[i]), [&](int backend) {
      const std::string path = BlockPath(backends_->path(backend), ids[i], config_.data_dir_shard_bytes);
      if (ops.Stat(path, nullptr, nullptr) == 0) return Status::Ok();
      const int err = errno;
      if (err == ENOENT) return Status(StatusCode::kNotFound, "'" + path + "' does not exist", err);
      return Status::IoError("backend '" + backends_->path(backend) + "': stat('" + path + "') failed", err);
    });
    if (s.code() == StatusCode::kStoreUnhealthy) return s;
    if (!s.ok() && s.code() != StatusCode::kNotFound) {
      spdlog::warn("lookup of block {} failed on every path, reported as a miss: {}", ids[i].Hex(), s.ToString());
    }
    found[i] = s.ok();
  }
  return found;
}

Status PosixStore::Remove(std::span<const BlockId> ids) {
  if (!set_up_) return Status::InvalidArgument("PosixStore used before a successful Setup");
  FileOps& ops = *deps_.file_ops;
  Status first;
  for (const BlockId& id : ids) {
    Status s = CallOnRoute(*backends_, BlockIdHasher{}(id), [&](int backend) {
      const std::string path = BlockPath(backends_->path(backend), id, config_.data_dir_shard_bytes);
      if (ops.Unlink(path) == 0) return Status::Ok();
      const int err = errno;
      if (err == ENOENT) return Status(StatusCode::kNotFound, "'" + path + "' does not exist", err);
      return Status::IoError("backend '" + backends_->path(backend) + "': unlink('" + path + "') failed", err);
    });
    if (!s.ok() && s.code() != StatusCode::kNotFound && first.ok()) first = s;
  }
  return first;
}

void PosixStore::Abandon(std::span<const BlockId> ids) {
  if (!set_up_ || !temp_files_) return;
  for (const BlockId& id : ids) temp_files_->Abandon(id);
}

Result<std::vector<BlockPresence>> PosixStore::Presence(std::span<const BlockId> ids,
                                                        std::span<const uint8_t> inline_header) {
  if (!set_up_) return Status::InvalidArgument("PosixStore used before a successful Setup");
  if (!inline_header.empty() && inline_header.size() != ids.size()) {
    return Status::InvalidArgument("Presence: " + std::to_string(inline_header.size()) + " inline-header flags for " +
                                   std::to_string(ids.size()) + " blocks");
  }
  std::vector<BlockPresence> out(ids.size(), BlockPresence::kUnknown);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int primary = backends_->Primary(BlockIdHasher{}(ids[i]));
    if (!backends_->available(primary)) continue;
    const std::string path = BlockPath(backends_->path(primary), ids[i], config_.data_dir_shard_bytes);
    off_t size = 0;
    // A file cut inside the header region has all its data but cannot be read as its block.
    const uint64_t whole = config_.block_size + (!inline_header.empty() && inline_header[i] ? kInlineHeaderBytes : 0);
    if (deps_.file_ops->Stat(path, nullptr, &size) == 0) {
      out[i] = static_cast<uint64_t>(size) >= whole ? BlockPresence::kPresent : BlockPresence::kLost;
    } else if (errno == ENOENT) {
      out[i] = BlockPresence::kLost;
    } else {
      spdlog::warn("presence of block {}: stat('{}') failed: {}", ids[i].Hex(), path, ErrnoText(errno));
    }
  }
  return out;
}

std::optional<AioQueueStats> PosixStore::aio_queue_stats() {
  if (auto* aio = dynamic_cast<AioEngine*>(engine_.get())) return aio->queue_stats();
  return std::nullopt;
}

std::vector<BackendStatus> PosixStore::BackendStates() const {
  std::vector<BackendStatus> out;
  if (!backends_) return out;
  for (int i = 0; i < backends_->size(); ++i) {
    const HealthWindow& w = backends_->window(i);
    out.push_back({backends_->path(i), backends_->available(i), w.count(), w.failures(), backends_->IoCounts(i)});
  }
  return out;
}

}  // namespace kvchaos::store
