// Transfer: one Dump or Load task in flight — the retry policy above the I/O engines.
//
// Each shard is routed on its block's hash (all shards of a block take the same route) and tried
// on one candidate at a time. An attempt's result feeds the backend's window (except NotFound), and:
//   - success: a read that used an attempt buffer copies it into the caller's buffers — only the
//     winner ever writes there, and only before the task can complete;
//   - NotFound: a cache miss, returned at once, no retry;
//   - any other error or a timeout: the next candidate (skipping unavailable and tried paths);
//     when none is left the shard fails with the last error (StoreUnhealthy if no path was open).
// When per-attempt timeouts are on, every read attempt gets its own buffer (a timed-out attempt
// may still complete in the kernel) and writes send a saved copy of the data, so a late completion
// never reads from or writes to the caller's memory. Without timeouts, attempts use the caller's
// buffers directly unless the engine needs alignment they lack.
// A block's commit (rename of `.tmp` to its final name) runs on the block's route once every shard
// of it in this task is written and the task holds its last shard; paths its shards were written
// through come first, paths where its writes failed or timed out last, since a rename is a
// synchronous metadata call with no timeout; ENOENT on a path none of its shards went through is
// no health sample against that path. A shard retried on another path may have gone to
// another file: when the written temp files are not one file (separate disks rather than paths to
// one storage), the block is refused with IoError instead of being committed torn.
// With durable commits (store option `durable_commit`), every write attempt makes its data durable
// before it reports success, and a block is acknowledged only after its rename is made durable
// too: the commit hands the block's directory to the DirectorySyncer (group commit) and the task
// completes when that fsync did; a failed directory fsync fails the block's task.
// A refusal of a full engine queue (IsQueueFull) is no backend's fault: no health sample, no retry.
// Temp files that will never be committed — of failed attempts, of attempts that complete after
// their timeout, of a block whose task ends without its commit — are removed through TempFiles
// once the block is quiet (temp_files.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/store/aligned_buffer.h"
#include "core/store/backend_set.h"
#include "core/store/buffer_pool.h"
#include "core/store/directory_syncer.h"
#include "core/store/file_ops.h"
#include "core/store/io_engine.h"
#include "core/store/store.h"
#include "core/store/store_config.h"
#include "core/store/temp_files.h"

namespace kvchaos::store {

struct TransferContext {
  Runtime* runtime = nullptr;
  BackendSet* backends = nullptr;
  IoEngine* engine = nullptr;
  FileOps* file_ops = nullptr;
  TempFiles* temp_files = nullptr;  // writes: removal of abandoned temp files (may be null)
  // Durable commits: writes sync their data, commits their directory through it. Null: off.
  DirectorySyncer* dir_syncer = nullptr;
  std::shared_ptr<BufferPool> buffers;  // the attempts' own buffers (reused across tasks)
  uint64_t shard_size = 0;
  uint64_t shards_per_block = 1;
  // The task's blocks have an inline header: one more shard, the last, at offset block_size.
  bool inline_header = false;
  int shard_width = kDefaultShardWidth;  // data_dir_shard_bytes: the directory layout (block_id.h)
  bool io_direct = false;
  bool engine_needs_alignment = false;
  Duration attempt_timeout{0};
  // Shards admitted by the store and not finished; each unit takes one off when it ends (may be null).
  std::atomic<int64_t>* inflight_shards = nullptr;
  bool reads_into_caller_buffers = false;  // a planted bug (StoreTestingKnobs): late reads touch caller memory
  // Set once the store is being destroyed: a shard that fails then ends with its error instead of
  // being retried on the next path (the destructor waits for I/O, it must not start more). May be null.
  const std::atomic<bool>* closing = nullptr;
};

// Runs `op` on the route of a block with `hash` (metadata calls: stat, rename, unlink): the first
// available candidate, then the next on failure; NotFound returns at once and is not a sample.
// Paths in `avoid` (say, where this block's writes just failed or timed out) are tried last.
Status CallOnRoute(BackendSet& backends, uint64_t hash, const std::function<Status(int backend)>& op,
                   uint64_t avoid = 0);

class Transfer : public std::enable_shared_from_this<Transfer> {
 public:
  static std::shared_ptr<Transfer> Start(const TransferContext& ctx, IoDirection direction, TransferTask task);
  Transfer(const TransferContext& ctx, IoDirection direction, TransferTask task);

  // Blocks until every shard (and commit) is done; the first failure.
  Status Wait();

 private:
  struct Unit {
    uint64_t hash = 0;
    uint64_t tried = 0;
    uint64_t failed = 0;  // paths where an attempt failed or timed out
    uint64_t written = 0;  // the path its write succeeded on
    Status last_error;
    std::shared_ptr<AlignedBuffer> saved;  // writes: the data every attempt sends
    size_t length = 0;
    size_t block_slot = 0;
    bool finished = false;  // FinishUnit ran (exactly once per unit); guarded by mu_
  };
  struct BlockProgress {
    BlockId id;
    uint64_t hash = 0;
    size_t remaining = 0;
    bool has_last = false;
    bool failed = false;
    uint64_t failed_paths = 0;  // the commit avoids these: a path that just hung may hang a rename too
    uint64_t written_paths = 0;  // paths its shards were written to in this task (their temp files)
    size_t shards = 0;           // how many of its shards this task holds
  };

  void Launch(size_t unit_index);
  void OnAttemptDone(size_t unit_index, int backend, const std::shared_ptr<AlignedBuffer>& own, Status status,
                     bool on_time);
  void FinishUnit(size_t unit_index, Status status);
  // One unit (or one block's commit) is over with `status`; the task ends when the last one is.
  void Settle(Status status) EXCLUDES(mu_);
  // The paths holding the temp files of the block's written shards: this task's, and when the
  // block's other shards came in earlier tasks, theirs too (TempFiles keeps them).
  uint64_t WrittenPaths(const BlockProgress& block) const;
  // OK when the temp files on `paths` are one file (paths to the same storage); a block whose
  // shards went to different files would be committed torn, so it is refused.
  Status CheckOneFile(const BlockProgress& block, uint64_t paths) const;
  // Renames the block's temp file on its route, paths in `written` first; *renamed_on: the path
  // it did that on.
  Status Commit(const BlockProgress& block, uint64_t written, int* renamed_on);
  bool UseOwnBuffers(const Shard& shard) const;
  // Shards of a block, its inline header included when it has one.
  uint64_t ShardsPerBlock() const { return ctx_.shards_per_block + (ctx_.inline_header ? 1 : 0); }

  TransferContext ctx_;
  IoDirection direction_;
  TransferTask task_;
  std::vector<Unit> units_;
  std::vector<BlockProgress> blocks_;
  Mutex mu_;
  CondVar cv_;
  size_t pending_ GUARDED_BY(mu_) = 0;
  Status status_ GUARDED_BY(mu_);
};

}  // namespace kvchaos::store
