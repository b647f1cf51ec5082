// UnsyncedWrites: what faultfs needs to simulate a crash that loses data not yet fsynced (the
// idea of LevelDB's fault_injection_test: keep the file system "as of the last sync"). Before a
// write to a file that a drop_unsynced rule tracks, the bytes it overwrites and the file's size
// are saved; fsync/fdatasync forget them; Crash() puts every tracked file back as of its last
// sync (old bytes restored newest first, size truncated back). Memory is bounded: past
// kMaxSavedBytes a file stops being tracked and the crash reports it as not restorable.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
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
  // The file was synced: its writes so far survive a crash.
  void Synced(uint64_t file);
  // Drops every unsynced write; returns {"files": [...], "bytes": n} and the fuse inodes whose
  // cached pages must be invalidated.
  nlohmann::json Crash(std::vector<uint64_t>* fuse_inos);

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
  std::mutex mu_;
  std::map<uint64_t, File> files_;  // guarded by mu_
  uint64_t saved_bytes_ = 0;        // guarded by mu_
};

}  // namespace kvchaos::faultfs
