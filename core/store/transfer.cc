// Transfer: routing, retry, buffer ownership and commit of one task (see transfer.h).
#include "core/store/transfer.h"

#include <cerrno>
#include <cstring>
#include <map>

#include <spdlog/spdlog.h>

#include "core/common/assert.h"

namespace kvchaos::store {

Status CallOnRoute(BackendSet& backends, uint64_t hash, const std::function<Status(int backend)>& op,
                   uint64_t avoid) {
  uint64_t tried = 0;
  Status last;
  for (;;) {
    int backend = backends.SelectNext(hash, tried | avoid);
    if (backend < 0) backend = backends.SelectNext(hash, tried);  // only avoided paths are left
    if (backend < 0) break;
    tried |= 1ULL << backend;
    Status status = op(backend);
    if (status.code() == StatusCode::kNotFound) return status;
    backends.Record(backend, status.ok(), SampleSource::kBusiness);
    if (status.ok()) return status;
    last = std::move(status);
  }
  if (tried == 0) return Status::StoreUnhealthy("no storage backend is available");
  return last;
}

std::shared_ptr<Transfer> Transfer::Start(const TransferContext& ctx, IoDirection direction, TransferTask task) {
  auto transfer = std::make_shared<Transfer>(ctx, direction, std::move(task));
  const size_t n = transfer->units_.size();
  if (n == 0) return transfer;
  for (size_t i = 0; i < n; ++i) transfer->Launch(i);
  return transfer;
}

Transfer::Transfer(const TransferContext& ctx, IoDirection direction, TransferTask task)
    : ctx_(ctx), direction_(direction), task_(std::move(task)), mu_(*ctx.runtime), cv_(*ctx.runtime) {
  std::map<BlockId, size_t> slot_of;
  units_.resize(task_.shards.size());
  for (size_t i = 0; i < task_.shards.size(); ++i) {
    const Shard& shard = task_.shards[i];
    Unit& unit = units_[i];
    unit.hash = BlockIdHasher{}(shard.block);
    for (const auto& b : shard.buffers) unit.length += b.size();
    auto [it, inserted] = slot_of.emplace(shard.block, blocks_.size());
    if (inserted) blocks_.push_back(BlockProgress{shard.block, unit.hash});
    unit.block_slot = it->second;
    BlockProgress& block = blocks_[unit.block_slot];
    ++block.remaining;
    ++block.shards;
    if (shard.index + 1 == ShardsPerBlock()) block.has_last = true;
    if (direction_ == IoDirection::kWrite && UseOwnBuffers(shard)) {
      unit.saved = ctx_.buffers->Get(unit.length);
      size_t at = 0;
      for (const auto& b : shard.buffers) {
        std::memcpy(unit.saved->data() + at, b.data(), b.size());
        at += b.size();
      }
    }
  }
  MutexLock lock(mu_);
  pending_ = units_.size();
}

bool Transfer::UseOwnBuffers(const Shard& shard) const {
  if (ctx_.attempt_timeout > Duration::zero() && !(ctx_.reads_into_caller_buffers && direction_ == IoDirection::kRead)) {
    return true;
  }
  if (!ctx_.engine_needs_alignment) return false;
  for (const auto& b : shard.buffers) {
    if (!AlignedBuffer::IsAligned(b.data()) || b.size() % AlignedBuffer::kAlignment != 0) return true;
  }
  return false;
}

void Transfer::Launch(size_t unit_index) {
  Unit& unit = units_[unit_index];
  const Shard& shard = task_.shards[unit_index];
  const int backend = ctx_.backends->SelectNext(unit.hash, unit.tried);
  if (backend < 0) {
    FinishUnit(unit_index, unit.tried == 0 ? Status::StoreUnhealthy("block " + shard.block.Hex() +
                                                                     ": no storage backend is available")
                                           : unit.last_error);
    return;
  }
  if (unit.tried != 0) ctx_.backends->CountRetry(backend);
  unit.tried |= 1ULL << backend;
  const std::string& root = ctx_.backends->path(backend);

  auto request = std::make_shared<IoRequest>();
  request->direction = direction_;
  request->backend = root;
  request->path = direction_ == IoDirection::kWrite ? BlockTmpPath(root, shard.block, ctx_.shard_width)
                                                     : BlockPath(root, shard.block, ctx_.shard_width);
  request->dir = BlockDir(root, shard.block, ctx_.shard_width);
  request->io_direct = ctx_.io_direct;
  request->offset = static_cast<off_t>(shard.index * ctx_.shard_size);
  request->length = unit.length;
  if (direction_ == IoDirection::kWrite) {
    request->file_size = static_cast<off_t>(ctx_.shards_per_block * ctx_.shard_size +
                                            (ctx_.inline_header ? kInlineHeaderBytes : 0));
  }
  request->timeout = ctx_.attempt_timeout;
  request->durable = direction_ == IoDirection::kWrite && ctx_.dir_syncer != nullptr;
  std::shared_ptr<AlignedBuffer> own;
  if (direction_ == IoDirection::kWrite && unit.saved) {
    request->iov.push_back({unit.saved->data(), unit.length});
    request->keepalive = unit.saved;
  } else if (direction_ == IoDirection::kRead && UseOwnBuffers(shard)) {
    own = ctx_.buffers->Get(unit.length);  // its own per attempt, never one still in use
    request->iov.push_back({own->data(), unit.length});
    request->keepalive = own;
  } else {
    for (const auto& b : shard.buffers) request->iov.push_back({b.data(), b.size()});
  }
  std::shared_ptr<Transfer> self = shared_from_this();
  request->done = [self, unit_index, backend, own](Status status, bool on_time) {
    self->OnAttemptDone(unit_index, backend, own, std::move(status), on_time);
  };
  if (direction_ == IoDirection::kWrite && ctx_.temp_files != nullptr) ctx_.temp_files->Begin(shard.block);
  ctx_.engine->Submit(std::move(request));
}

void Transfer::OnAttemptDone(size_t unit_index, int backend, const std::shared_ptr<AlignedBuffer>& own,
                             Status status, bool on_time) {
  const bool refused = IsQueueFull(status);  // never reached the backend
  if (status.code() != StatusCode::kNotFound && !refused) {
    ctx_.backends->Record(backend, status.ok(), SampleSource::kBusiness);
    if (!on_time) {
      ctx_.backends->CountLate(backend);
    } else if (status.code() == StatusCode::kTimeout) {
      ctx_.backends->CountTimeout(backend);
    }
    if (!status.ok() && status.code() != StatusCode::kTimeout) ctx_.backends->CountError(backend, status.sys_errno());
  }
  // A write attempt is over unless this is its deadline report (the I/O goes on, a late call
  // follows). Only an on-time success keeps its temp file; any other end abandons it.
  if (direction_ == IoDirection::kWrite && ctx_.temp_files != nullptr &&
      !(on_time && status.code() == StatusCode::kTimeout)) {
    const BlockId& block = task_.shards[unit_index].block;
    ctx_.temp_files->End(block, on_time && status.ok(),
                         BlockTmpPath(ctx_.backends->path(backend), block, ctx_.shard_width));
  }
  if (!on_time) {
    // The shard was already retried elsewhere (or failed); the late result only fed the window.
    spdlog::debug("late {} result from '{}' ignored: {}", direction_ == IoDirection::kRead ? "read" : "write",
                  ctx_.backends->path(backend), status.ToString());
    return;
  }
  if (status.ok()) {
    if (own) {  // the winner, and the only attempt allowed to touch the caller's buffers
      size_t at = 0;
      for (const auto& b : task_.shards[unit_index].buffers) {
        std::memcpy(b.data(), own->data() + at, b.size());
        at += b.size();
      }
    }
    units_[unit_index].written = 1ULL << backend;
    FinishUnit(unit_index, Status::Ok());
    return;
  }
  if (status.code() == StatusCode::kNotFound || refused) {
    FinishUnit(unit_index, std::move(status));
    return;
  }
  spdlog::debug("{} of block {} shard {} failed on '{}', trying the next path: {}",
                direction_ == IoDirection::kRead ? "read" : "write", task_.shards[unit_index].block.Hex(),
                task_.shards[unit_index].index, ctx_.backends->path(backend), status.ToString());
  units_[unit_index].failed |= 1ULL << backend;
  if (ctx_.closing != nullptr && ctx_.closing->load(std::memory_order_acquire)) {
    FinishUnit(unit_index, status.WithContext("store closing, not retried"));
    return;
  }
  units_[unit_index].last_error = std::move(status);
  Launch(unit_index);
}

void Transfer::FinishUnit(size_t unit_index, Status status) {
  const BlockProgress* ended = nullptr;  // a block whose last shard this task holds, all shards done
  if (ctx_.inflight_shards != nullptr) {
    const int64_t before = ctx_.inflight_shards->fetch_sub(1, std::memory_order_acq_rel);
    KVCHAOS_ASSERT(before > 0, "store in-flight shard count was " + std::to_string(before) + " when a shard ended");
  }
  {
    MutexLock lock(mu_);
    Unit& unit = units_[unit_index];
    KVCHAOS_ASSERT(!unit.finished, "shard " + std::to_string(unit_index) + " of a transfer finished twice");
    KVCHAOS_ASSERT(pending_ > 0, "transfer progress: a shard finished with nothing pending");
    unit.finished = true;
    if (!status.ok() && status_.ok()) status_ = status;
    if (direction_ == IoDirection::kWrite) {
      BlockProgress& block = blocks_[unit.block_slot];
      KVCHAOS_ASSERT(block.remaining > 0, "block " + block.id.Hex() + ": more shards finished than the task holds");
      if (!status.ok()) block.failed = true;
      block.failed_paths |= unit.failed;
      block.written_paths |= unit.written;
      if (--block.remaining == 0 && block.has_last) ended = &block;
    }
    if (ended == nullptr) {
      if (--pending_ == 0) cv_.NotifyAll();
      return;
    }
  }
  int renamed_on = -1;
  const uint64_t written = WrittenPaths(*ended);
  Status committed = Status::Ok();
  if (!ended->failed) {
    committed = CheckOneFile(*ended, written);
    if (committed.ok()) committed = Commit(*ended, written, &renamed_on);
  }
  if (ctx_.temp_files != nullptr) {
    // Every temp file the block's shards were written to, except the one the commit renamed, will
    // never be committed (on shared storage they are mostly that same name, already gone).
    std::vector<std::string> unused;
    for (int b = 0; b < ctx_.backends->size(); ++b) {
      if ((written >> b & 1) != 0 && b != renamed_on) {
        unused.push_back(BlockTmpPath(ctx_.backends->path(b), ended->id, ctx_.shard_width));
      }
    }
    ctx_.temp_files->Resolve(ended->id, unused);
  }
  if (committed.ok() && renamed_on >= 0 && ctx_.dir_syncer != nullptr) {
    // Its data is durable (every write attempt synced it); its name is once the directory is.
    const std::string id = ended->id.Hex();
    std::shared_ptr<Transfer> self = shared_from_this();
    ctx_.dir_syncer->Sync(renamed_on, BlockDir(ctx_.backends->path(renamed_on), ended->id, ctx_.shard_width),
                          [self, id](Status synced) {
                            self->Settle(synced.ok() ? synced
                                                     : synced.WithContext("block " + id +
                                                                          ": renamed but not made durable"));
                          });
    return;
  }
  Settle(std::move(committed));
}

void Transfer::Settle(Status status) {
  MutexLock lock(mu_);
  KVCHAOS_ASSERT(pending_ > 0, "transfer progress: a commit settled with nothing pending");
  if (!status.ok() && status_.ok()) status_ = std::move(status);
  if (--pending_ == 0) cv_.NotifyAll();
}

uint64_t Transfer::WrittenPaths(const BlockProgress& block) const {
  uint64_t paths = block.written_paths;
  if (block.shards == ShardsPerBlock() || ctx_.temp_files == nullptr) return paths;
  for (const std::string& tmp : ctx_.temp_files->Written(block.id)) {
    for (int b = 0; b < ctx_.backends->size(); ++b) {
      if (tmp == BlockTmpPath(ctx_.backends->path(b), block.id, ctx_.shard_width)) paths |= 1ULL << b;
    }
  }
  return paths;
}

Status Transfer::CheckOneFile(const BlockProgress& block, uint64_t paths) const {
  if ((paths & (paths - 1)) == 0) return Status::Ok();  // one path (or none): one file
  std::string names;
  uint64_t first_device = 0, first_inode = 0;
  bool same = true;
  for (int b = 0; b < ctx_.backends->size(); ++b) {
    if ((paths >> b & 1) == 0) continue;
    const std::string tmp = BlockTmpPath(ctx_.backends->path(b), block.id, ctx_.shard_width);
    uint64_t device = 0, inode = 0;
    if (ctx_.file_ops->FileId(tmp, &device, &inode) != 0) {
      return Status::IoError("block " + block.id.Hex() + ": cannot stat its temp file '" + tmp + "' before the commit",
                             errno);
    }
    if (names.empty()) {
      first_device = device;
      first_inode = inode;
    } else if (device != first_device || inode != first_inode) {
      same = false;
    }
    names += (names.empty() ? "'" : ", '") + ctx_.backends->path(b) + "'";
  }
  if (same) return Status::Ok();
  return Status::IoError("block " + block.id.Hex() + ": its shards were written through backends " + names +
                         ", which are not the same storage (different temp files); the block is not committed, "
                         "dump it again",
                         EXDEV);
}

Status Transfer::Commit(const BlockProgress& block, uint64_t written, int* renamed_on) {
  FileOps& ops = *ctx_.file_ops;
  BackendSet& backends = *ctx_.backends;
  const uint64_t later = block.failed_paths | ~written;
  uint64_t tried = 0;
  Status last;
  for (;;) {
    int backend = backends.SelectNext(block.hash, tried | later);
    if (backend < 0) backend = backends.SelectNext(block.hash, tried);  // only later paths are left
    if (backend < 0) break;
    tried |= 1ULL << backend;
    const std::string& root = backends.path(backend);
    const std::string from = BlockTmpPath(root, block.id, ctx_.shard_width);
    if (ops.Rename(from, BlockPath(root, block.id, ctx_.shard_width)) == 0) {
      backends.Record(backend, true, SampleSource::kBusiness);
      *renamed_on = backend;
      return Status::Ok();
    }
    const int err = errno;
    // No temp file on a path none of the shards went through (a separate disk) is not that
    // path's fault: no health sample, and the written path's own error stays the answer.
    const bool absent_elsewhere = err == ENOENT && (written >> backend & 1) == 0;
    if (!absent_elsewhere) backends.Record(backend, false, SampleSource::kBusiness);
    if (!absent_elsewhere || last.ok()) {
      last = Status::IoError("backend '" + root + "': rename('" + from + "') failed", err);
    }
  }
  if (tried == 0) return Status::StoreUnhealthy("no storage backend is available");
  return last;
}

Status Transfer::Wait() {
  MutexLock lock(mu_);
  while (pending_ != 0) cv_.Wait(mu_);
  // Read back what the shards wrote: every one ended, exactly once.
  for (size_t i = 0; i < units_.size(); ++i) {
    KVCHAOS_ASSERT(units_[i].finished, "transfer done with shard " + std::to_string(i) + " unfinished");
  }
  return status_;
}

}  // namespace kvchaos::store
