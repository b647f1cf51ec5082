// UnsyncedWrites: what faultfs needs to simulate a crash that loses data not yet fsynced (the
// idea of LevelDB's fault_injection_test: keep the file system "as of the last sync"). Before a
// write to a file that a drop_unsynced rule tracks, the bytes it overwrites and the file's size
// are saved; fsync/fdatasync forget them; Crash() puts every tracked file back as of its last
// sync (old bytes restored newest first, size truncated back). Memory is bounded: past
// kMaxSavedBytes a file stops being tracked and the crash reports it as not restorable.
//
// Names too: a file created through the mount is remembered until it is made durable — by its
// own fsync/fdatasync (what ext4 and xfs give in practice), or, with need_dir_sync, only by an
// fsync of its directory (what POSIX promises) — and Crash() removes the ones that were not.
// Renames and unlinks of such files are followed. Not modelled: unlinks, renames and truncates
// of older files are never undone, and directories created since the last sync stay.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace kvchaos::faultfs {

class UnsyncedWrites {
 public:
  static constexpr uint64_t kMaxSavedBytes = uint64_t{512} << 20;

  ~UnsyncedWrites();

  // Saves what a write of [offset, offset + length) to `file` will overwrite. `reopen` opens a
  // plain read-write descriptor of the source file (called once per file until its next sync).
  Status BeforeWrite(uint64_t file, const std::string& path, uint64_t fuse_ino, uint64_t offset, uint64_t length,
                     int (*reopen)(void* ctx), void* ctx);
  // The file was synced: its writes so far survive a crash, and so does its name unless it
  // needs a directory sync.
  void Synced(uint64_t file);

  // `path` (inside the mount) was created as file `file` in the directory whose FUSE inode is
  // `parent_ino`; a crash removes it until it is durable.
  void Created(const std::string& path, uint64_t file, uint64_t parent_ino, bool need_dir_sync);
  // The directory at `dir_path` ("" for the root) was fsynced: the files created in it stay.
  void DirSynced(const std::string& dir_path);
  void Unlinked(const std::string& path);
  // A rename (of a directory: everything below it moves too); `new_parent_ino` is the target
  // directory's FUSE inode.
  void Renamed(const std::string& old_path, const std::string& new_path, uint64_t new_parent_ino, bool exchange);
  // Whether any created file is being followed (a cheap check for the passthrough).
  bool following_names() const { return created_count_.load(std::memory_order_relaxed) > 0; }

  // Drops every unsynced write and removes every created file that is not durable, below the
  // source directory `source_fd`. Returns {"files": [...], "bytes_restored": n,
  // "removed": [paths]}, the FUSE inodes whose cached pages must be invalidated, and the
  // (directory inode, name) entries the kernel must forget.
  nlohmann::json Crash(int source_fd, std::vector<uint64_t>* fuse_inos,
                       std::vector<std::pair<uint64_t, std::string>>* gone_entries);

 private:
  struct Undo {
    uint64_t offset;
    std::vector<uint8_t> old;  // the bytes that were there (shorter when past the old end)
  };
  struct File {
    int fd = -1;
    std::string path;
    uint64_t fuse_ino = 0;
    uint64_t synced_size = 0;
    bool overflowed = false;
    std::vector<Undo> undo;
  };
  struct CreatedFile {
    uint64_t file = 0;
    uint64_t parent_ino = 0;
    bool need_dir_sync = false;
  };
  void ForgetCreatedLocked(std::map<std::string, CreatedFile>::iterator it);

  std::mutex mu_;
  std::map<uint64_t, File> files_;  // guarded by mu_
  uint64_t saved_bytes_ = 0;        // guarded by mu_
  std::map<std::string, CreatedFile> created_;  // guarded by mu_, by path inside the mount
  std::atomic<size_t> created_count_{0};        // created_.size(), readable without mu_
};

}  // namespace kvchaos::faultfs
