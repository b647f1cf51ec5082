// DirectorySyncer: the directory half of a durable commit (store option `durable_commit`), with
// group commit. A block's data is made durable by its write attempts before its rename (psync:
// fdatasync; aio: IOCB_CMD_FDSYNC); the rename — the block's name — survives a power loss only once
// its directory is fsynced. Blocks that commit at about the same time share those fsyncs: one
// thread (`ucm_dir_sync`) takes every request queued since its last round, fsyncs each distinct
// directory of the round once (in path order), then answers every request. While a round runs,
// new requests queue for the next one, so under load a round covers the blocks committed during
// the previous one and a lone block waits for one fsync.
//
// Shard directories (`<backend>/<3 hex>`) are made at setup, and again by mkdir on first use when
// one went missing, so a shard directory's own entry in the backend directory must be durable too:
// the first time this process commits into a shard directory, its round also fsyncs the backend
// directory (once per backend per round).
// A failed fsync fails every request of the round for that directory (its blocks are not
// durable, so not acknowledged) and is a failure sample of the path; a successful one is one
// success sample per directory.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/store/backend_set.h"
#include "core/store/file_ops.h"

namespace kvchaos::store {

// open(O_RDONLY | O_DIRECTORY), fsync, close; the error names the backend, the directory and the call.
Status SyncDirectory(FileOps& ops, const std::string& backend, const std::string& dir);

class DirectorySyncer {
 public:
  DirectorySyncer(Runtime& runtime, FileOps& ops, BackendSet& backends);
  ~DirectorySyncer();  // Stop()
  DirectorySyncer(const DirectorySyncer&) = delete;
  DirectorySyncer& operator=(const DirectorySyncer&) = delete;

  // Makes `dir`, a shard directory of `backend`, durable; `done` runs on the syncer thread once it
  // is (or failed). After Stop, `done` runs at once with Unavailable.
  void Sync(int backend, std::string dir, std::function<void(Status)> done) EXCLUDES(mu_);
  // Answers what is queued, then ends the thread. Idempotent.
  void Stop() EXCLUDES(mu_);

  // Rounds run and directory fsyncs issued so far (tests: blocks share them).
  uint64_t rounds() EXCLUDES(mu_);
  uint64_t directory_syncs() EXCLUDES(mu_);
  // Requests not answered yet: queued, or in the running round.
  size_t pending() EXCLUDES(mu_);

 private:
  struct Request {
    int backend = 0;
    std::string dir;
    std::function<void(Status)> done;
  };
  void Loop() EXCLUDES(mu_);
  void RunRound(std::vector<Request>& round) EXCLUDES(mu_);

  Runtime& runtime_;
  FileOps& ops_;
  BackendSet& backends_;
  Mutex mu_;
  CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::vector<Request> queue_ GUARDED_BY(mu_);
  uint64_t rounds_ GUARDED_BY(mu_) = 0;
  uint64_t directory_syncs_ GUARDED_BY(mu_) = 0;
  size_t in_round_ GUARDED_BY(mu_) = 0;
  // Shard directories whose entry in their backend directory is durable (only the syncer thread
  // reads and writes it). At most 4096 per backend.
  std::set<std::string> durable_dirs_;
  Thread thread_;
};

}  // namespace kvchaos::store
