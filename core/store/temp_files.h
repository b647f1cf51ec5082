// TempFiles: removes the `.tmp` files that write attempts leave behind when their data will never
// be committed there — an attempt that failed, one that completes after its timeout (its shard was
// retried elsewhere), or every temp file of a block whose task ended without its commit.
//
// The temp name is fixed (`<3hex>/<32hex>.tmp`), and the backends are usually several paths to
// one shared file system, so a retry on another path — or a newer Dump of the same block — writes
// the very same file. A temp file is therefore only ever removed while the block is quiet: no
// write attempt of the block is running on any path and no written shard of it waits for its
// block's commit (the last shard may come in a later task). Until then the stray paths are only
// noted; whoever makes the block quiet (the last attempt's end, or the block's commit or failure)
// removes them. A new attempt of a block whose temp files are being removed waits for the removal
// (one unlink per path) before it starts, so a removal never hits a file a newer attempt writes.
// Removing a path that no longer exists (the commit renamed it) is harmless and silent.
//
// What remains on disk: temp files of a process that crashed or was killed (the next write of that
// block on that path reuses and overwrites the file), of a block whose last shard never arrived
// and that its writer did not abandon, and paths whose unlink failed (logged as a warning).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/store/block_id.h"
#include "core/store/file_ops.h"

namespace kvchaos::store {

class TempFiles {
 public:
  TempFiles(Runtime& runtime, FileOps& ops) : ops_(ops), mu_(runtime), cv_(runtime) {}

  // A write attempt of `block` starts (waits while the block's stray temp files are being removed).
  void Begin(const BlockId& block) EXCLUDES(mu_);
  // The attempt's I/O is over (on time or late). written: it succeeded on time and its shard now
  // waits for the block's commit; otherwise its temp file `tmp_path` is abandoned.
  void End(const BlockId& block, bool written, const std::string& tmp_path) EXCLUDES(mu_);
  // The task holding the block's last shard is done with it: committed (the temp file was renamed)
  // or not, in which case `unused` — the temp files its shards were written to — are abandoned too.
  void Resolve(const BlockId& block, const std::vector<std::string>& unused) EXCLUDES(mu_);
  // The writer gives the block up before its last shard came (Store::Abandon): the temp files its
  // shards were written to will never be committed.
  void Abandon(const BlockId& block) EXCLUDES(mu_);

  // The temp files the block's shards were written to since its last Resolve (every path whose
  // attempt ended written), so the commit can check that they are one file.
  std::vector<std::string> Written(const BlockId& block) EXCLUDES(mu_);

  // Blocks with running attempts, pending commits or strays (tests: 0 once everything settled).
  size_t tracked() EXCLUDES(mu_);

 private:
  struct Entry {
    int running = 0;
    bool awaiting_commit = false;
    bool removing = false;
    std::vector<std::string> strays;
    std::vector<std::string> written;  // temp files with written shards awaiting the commit
  };
  // Removes the block's strays if it is quiet; called with mu_ held, returns with it held.
  void CleanIfQuiet(const BlockId& block) REQUIRES(mu_);

  FileOps& ops_;
  Mutex mu_;
  CondVar cv_;  // a removal finished
  std::map<BlockId, Entry> blocks_ GUARDED_BY(mu_);
};

}  // namespace kvchaos::store
