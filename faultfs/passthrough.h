// FaultFs: the libfuse3 low-level passthrough of faultfs. It mirrors SOURCE inode by inode (each
// known inode holds an O_PATH descriptor of the source, like libfuse's passthrough_hp), asks the
// RuleEngine about every call and applies the verdict: errors, latency, hangs, data damage,
// sticky bad ranges and the undo log that a "crash" replays.
//
// With no rule installed a call costs one atomic load more than a plain passthrough: reads splice
// straight from the source file, writes splice into it, and no path is even computed.
//
// Caching modes (see README.md for what an application sees in each):
//   targeted (default): files a rule's glob matches when they are opened, and O_DIRECT opens,
//                       use direct I/O; other files use the kernel page cache (write-through).
//                       Negative lookups are never cached, so files created through another
//                       mount of the same source appear at once.
//   none:               every open uses direct I/O and attributes/entries are never cached.
//   always:             page cache and writeback cache everywhere (fast, but read faults may be
//                       served from cache and write errors move to fsync/close).
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <sys/types.h>

#include <atomic>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "faultfs/bad_ranges.h"
#include "faultfs/rule_engine.h"
#include "faultfs/unsynced_writes.h"

namespace kvchaos::faultfs {

enum class CacheMode { kTargeted, kNone, kAlways };
Result<CacheMode> CacheModeFromName(std::string_view name);
std::string_view CacheModeName(CacheMode mode);

struct FsOptions {
  std::string source;
  CacheMode cache = CacheMode::kTargeted;
  bool splice = true;
};

struct Inode {
  int fd = -1;  // O_PATH descriptor of the source inode
  dev_t src_dev = 0;
  ino_t src_ino = 0;
  uint64_t nlookup = 0;  // guarded by FaultFs::inodes_mu_
  std::string path;      // path inside the mount (first name seen), guarded by FaultFs::paths_mu_
};

class FaultFs {
 public:
  FaultFs(FsOptions options, RuleEngine& engine);
  ~FaultFs();
  FaultFs(const FaultFs&) = delete;
  FaultFs& operator=(const FaultFs&) = delete;

  // Opens SOURCE; fails with a clear message when it is not a directory. Call it before
  // fuse_daemonize, so the shell that started faultfs sees the error.
  Status Open();
  // Opens what belongs to the serving process (/proc/self/fd, through which files are reopened).
  // Call it in that process: after fuse_daemonize, whose fork leaves the parent behind.
  Status OpenProcessFds();
  static const fuse_lowlevel_ops& Ops();

  void set_session(fuse_session* se) { session_.store(se); }
  // Drops every unsynced write of tracked files (the "crash" control command).
  nlohmann::json Crash();

  RuleEngine& engine() { return engine_; }
  const FsOptions& options() const { return options_; }

  // --- used by the op handlers in passthrough.cc ---
  Inode& Get(fuse_ino_t ino);
  std::string PathOf(const Inode& inode) const;
  std::string ChildPath(const Inode& parent, const char* name) const;
  // Looks `name` up under `parent` and fills `e` (nlookup + 1); an errno on failure.
  int Lookup(Inode& parent, const char* name, const std::string& path, fuse_entry_param* e);
  void Forget(fuse_ino_t ino, uint64_t n);
  // Updates the paths of known inodes after a rename (of a directory: everything below it too).
  void Renamed(const std::string& old_path, const std::string& new_path, bool exchange);
  double attr_timeout() const { return attr_timeout_; }
  int proc_self_fd() const { return proc_self_fd_; }
  int root_fd() const { return root_.fd; }  // O_PATH descriptor of SOURCE
  BadRanges& bad_ranges() { return bad_ranges_; }
  UnsyncedWrites& unsynced() { return unsynced_; }
  // Open directory handles, so that those the kernel never releases (faultfs stopped while a
  // directory was open) are freed at the end.
  void HandleOpened(uint64_t fh);
  void HandleReleased(uint64_t fh);

 private:
  FsOptions options_;
  RuleEngine& engine_;
  double attr_timeout_;
  int proc_self_fd_ = -1;
  Inode root_;
  std::mutex inodes_mu_;
  std::map<std::pair<dev_t, ino_t>, std::unique_ptr<Inode>> inodes_;  // guarded by inodes_mu_
  mutable std::shared_mutex paths_mu_;
  BadRanges bad_ranges_;
  UnsyncedWrites unsynced_;
  std::atomic<fuse_session*> session_{nullptr};
  std::mutex handles_mu_;
  std::set<uint64_t> dir_handles_;  // guarded by handles_mu_
};

}  // namespace kvchaos::faultfs
