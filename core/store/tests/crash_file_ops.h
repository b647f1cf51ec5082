// CrashFileOps: FileOps over real files that keeps track of the file system "as of the last sync"
// (the idea of LevelDB's db/fault_injection_test.cc) and can put a directory tree back to that
// state, as a power loss would. The rules are POSIX's, the strict ones (faultfs's drop_unsynced
// with dir_sync: true models the same): a file's contents survive only as of its last fsync or
// fdatasync, and a name — created, or moved into a directory by rename — only once that
// directory was fsynced after the change. Crash() rewrites the tree under `root` accordingly:
// names that were never made durable vanish, durable names hold their file's last synced
// contents (empty when it was never synced), directories not made durable are empty.
// Everything under `root` when the model is built counts as durable. Data syncs the aio engine
// submits (IOCB_CMD_FDSYNC) reach the model through CrashAioOps; the model notes them at
// submission (the bytes cannot change between a write's completion and its sync).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <libaio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/store/aio_engine.h"
#include "core/store/file_ops.h"
#include "core/store/tests/forwarding_aio_ops.h"

namespace kvchaos::store::testing {

class CrashFileOps final : public ForwardingFileOps {
 public:
  // `root`: a directory, not a symlink (the backends' shared data directory, or their parent).
  explicit CrashFileOps(const std::string& root) : ForwardingFileOps(FileOps::Real()), root_(Normal(root)) { Snapshot(); }

  int Open(const std::string& path, int flags, mode_t mode) override {
    struct stat before {};
    const bool creates = (flags & O_CREAT) != 0 && lstat(path.c_str(), &before) != 0;
    const int fd = base_.Open(path, flags, mode);
    if (fd >= 0) {
      std::lock_guard<std::mutex> lock(mu_);
      fd_paths_[fd] = path;
      struct stat st {};
      // A new file: a new identity, even when it reuses the inode number of an unlinked one.
      if (creates && fstat(fd, &st) == 0) live_ids_[st.st_ino] = next_id_++;
    }
    return fd;
  }
  int Close(int fd) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      fd_paths_.erase(fd);
    }
    return base_.Close(fd);
  }
  int Fsync(int fd) override {
    const int r = base_.Fsync(fd);
    if (r == 0) Synced(fd);
    return r;
  }
  int Fdatasync(int fd) override {
    const int r = base_.Fdatasync(fd);
    if (r == 0) Synced(fd);
    return r;
  }

  // `fd` was synced: a directory's current entries, or a file's current contents, are durable.
  void Synced(int fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (S_ISDIR(st.st_mode)) {
      auto it = fd_paths_.find(fd);
      if (it != fd_paths_.end()) durable_entries_[Normal(it->second)] = ListLocked(Normal(it->second));
    } else {
      data_[IdOf(st.st_ino)] = ReadFd(fd);
    }
  }

  // The power loss: the tree under root becomes what was durable; that state is the new baseline.
  void Crash() {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<std::string, std::string> files;  // relative path -> contents
    std::vector<std::string> dirs;
    Collect(root_, "", &files, &dirs);
    for (const auto& entry : std::filesystem::directory_iterator(root_)) std::filesystem::remove_all(entry.path());
    for (const std::string& d : dirs) std::filesystem::create_directories(root_ + "/" + d);
    for (const auto& [rel, contents] : files) {
      std::ofstream out(root_ + "/" + rel, std::ios::binary | std::ios::trunc);
      out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    }
    SnapshotLocked();
  }

 private:
  struct Entry {
    bool is_dir = false;
    uint64_t file = 0;  // the model's identity of a file (inode numbers are reused)
  };

  uint64_t IdOf(ino_t ino) {
    auto [it, inserted] = live_ids_.emplace(ino, next_id_);
    if (inserted) ++next_id_;
    return it->second;
  }

  // Directories are keyed by their real path, so access paths that are symlinks to one
  // directory name the same directory.
  static std::string Normal(const std::string& path) {
    std::error_code ec;
    std::string p = std::filesystem::weakly_canonical(path, ec).string();
    if (ec) p = std::filesystem::path(path).lexically_normal().string();
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
  }
  std::map<std::string, Entry> ListLocked(const std::string& dir) {
    std::map<std::string, Entry> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      struct stat st {};
      if (lstat(e.path().c_str(), &st) != 0) continue;
      const bool is_dir = S_ISDIR(st.st_mode);
      out[e.path().filename().string()] = Entry{is_dir, is_dir ? 0 : IdOf(st.st_ino)};
    }
    return out;
  }
  // The contents behind `fd`, read through a fresh descriptor (the fd may be O_DIRECT or write-only).
  static std::string ReadFd(int fd) {
    std::ifstream in("/proc/self/fd/" + std::to_string(fd), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  static std::string ReadPath(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  void Snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    SnapshotLocked();
  }
  // Everything there now is durable: every directory's entries and every file's contents.
  void SnapshotLocked() {
    durable_entries_.clear();
    data_.clear();
    live_ids_.clear();
    std::vector<std::string> pending{Normal(root_)};
    while (!pending.empty()) {
      const std::string dir = pending.back();
      pending.pop_back();
      durable_entries_[dir] = ListLocked(dir);
      for (const auto& [name, entry] : durable_entries_[dir]) {
        if (entry.is_dir) pending.push_back(dir + "/" + name);
        else data_[entry.file] = ReadPath(dir + "/" + name);
      }
    }
  }
  // The durable tree below `dir` (an absolute path; `rel` is it relative to root).
  void Collect(const std::string& dir, const std::string& rel, std::map<std::string, std::string>* files,
               std::vector<std::string>* dirs) const {
    auto listed = durable_entries_.find(Normal(dir));
    if (listed == durable_entries_.end()) return;  // never synced since it was created: empty
    for (const auto& [name, entry] : listed->second) {
      const std::string child_rel = rel.empty() ? name : rel + "/" + name;
      if (entry.is_dir) {
        dirs->push_back(child_rel);
        Collect(dir + "/" + name, child_rel, files, dirs);
      } else {
        auto data = data_.find(entry.file);
        (*files)[child_rel] = data == data_.end() ? std::string() : data->second;
      }
    }
  }

  const std::string root_;
  std::mutex mu_;
  std::map<int, std::string> fd_paths_;
  std::map<std::string, std::map<std::string, Entry>> durable_entries_;  // directory -> its durable entries
  std::map<uint64_t, std::string> data_;  // file -> its contents as of its last sync
  std::map<ino_t, uint64_t> live_ids_;     // inode number -> the file it is now
  uint64_t next_id_ = 1;
};

// Real libaio; an IOCB_CMD_FSYNC/FDSYNC submission tells the crash model its file was synced.
class CrashAioOps final : public ForwardingAioOps {
 public:
  explicit CrashAioOps(CrashFileOps& model) : model_(model) {}
  int Submit(io_context_t ctx, long count, struct iocb** iocbs) override {
    for (long i = 0; i < count; ++i) {
      if (iocbs[i]->aio_lio_opcode == IO_CMD_FDSYNC || iocbs[i]->aio_lio_opcode == IO_CMD_FSYNC) {
        model_.Synced(iocbs[i]->aio_fildes);
        ++syncs_;
      }
    }
    return ForwardingAioOps::Submit(ctx, count, iocbs);
  }
  int syncs() const { return syncs_; }

 private:
  CrashFileOps& model_;
  std::atomic<int> syncs_{0};
};

}  // namespace kvchaos::store::testing
