// Undo log of unsynced writes; see unsynced_writes.h.
#include "faultfs/unsynced_writes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>

namespace kvchaos::faultfs {

UnsyncedWrites::~UnsyncedWrites() {
  for (auto& [key, file] : files_) {
    if (file.fd >= 0) close(file.fd);
  }
}

Status UnsyncedWrites::BeforeWrite(uint64_t key, const std::string& path, uint64_t fuse_ino, uint64_t offset,
                                   uint64_t length, int (*reopen)(void* ctx), void* ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  File& file = files_[key];
  if (file.fd < 0) {
    file.fd = reopen(ctx);
    if (file.fd < 0) {
      const int err = errno;
      files_.erase(key);
      return Status::IoError("drop_unsynced: cannot reopen '" + path + "'", err);
    }
    struct stat st {};
    if (fstat(file.fd, &st) != 0) return Status::IoError("drop_unsynced: fstat('" + path + "')", errno);
    file.path = path;
    file.fuse_ino = fuse_ino;
    file.synced_size = static_cast<uint64_t>(st.st_size);
  }
  if (file.overflowed) return Status::Ok();
  if (saved_bytes_ + length > kMaxSavedBytes) {
    file.overflowed = true;
    return Status::Ok();
  }
  Undo undo{offset, std::vector<uint8_t>(length)};
  const ssize_t n = pread(file.fd, undo.old.data(), length, static_cast<off_t>(offset));
  if (n < 0) return Status::IoError("drop_unsynced: pread('" + path + "')", errno);
  undo.old.resize(static_cast<size_t>(n));
  saved_bytes_ += undo.old.size();
  file.undo.push_back(std::move(undo));
  return Status::Ok();
}

namespace {
std::string ParentOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}
std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

void UnsyncedWrites::ForgetCreatedLocked(std::map<std::string, CreatedFile>::iterator it) {
  created_.erase(it);
  created_count_.store(created_.size(), std::memory_order_relaxed);
}

void UnsyncedWrites::Created(const std::string& path, uint64_t file, uint64_t parent_ino, bool need_dir_sync) {
  std::lock_guard<std::mutex> lock(mu_);
  created_[path] = CreatedFile{file, parent_ino, need_dir_sync};
  created_count_.store(created_.size(), std::memory_order_relaxed);
}

void UnsyncedWrites::DirSynced(const std::string& dir_path) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = created_.begin(); it != created_.end();) {
    auto next = std::next(it);
    if (ParentOf(it->first) == dir_path) ForgetCreatedLocked(it);
    it = next;
  }
}

void UnsyncedWrites::Unlinked(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = created_.find(path);
  if (it != created_.end()) ForgetCreatedLocked(it);
}

void UnsyncedWrites::Renamed(const std::string& old_path, const std::string& new_path, uint64_t new_parent_ino,
                             bool exchange) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!exchange) {
    // The file that the rename replaced is gone; its name now belongs to the moved one.
    auto replaced = created_.find(new_path);
    if (replaced != created_.end()) ForgetCreatedLocked(replaced);
  }
  auto moved = [](const std::string& path, const std::string& from, const std::string& to, std::string* out) {
    if (path == from) {
      *out = to;
      return true;
    }
    if (path.size() > from.size() && path.compare(0, from.size(), from) == 0 && path[from.size()] == '/') {
      *out = to + path.substr(from.size());
      return true;
    }
    return false;
  };
  std::map<std::string, CreatedFile> next;
  for (auto& [path, entry] : created_) {
    std::string to;
    CreatedFile moved_entry = entry;
    if (moved(path, old_path, new_path, &to)) {
      if (path == old_path) moved_entry.parent_ino = new_parent_ino;
      next[to] = moved_entry;
    } else if (exchange && moved(path, new_path, old_path, &to)) {
      next[to] = moved_entry;  // the exchanged entry's directory inode is not known here
    } else {
      next[path] = moved_entry;
    }
  }
  created_.swap(next);
  created_count_.store(created_.size(), std::memory_order_relaxed);
}

void UnsyncedWrites::Synced(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = created_.begin(); it != created_.end();) {
    auto next = std::next(it);
    if (it->second.file == key && !it->second.need_dir_sync) ForgetCreatedLocked(it);
    it = next;
  }
  auto it = files_.find(key);
  if (it == files_.end()) return;
  for (const Undo& undo : it->second.undo) saved_bytes_ -= undo.old.size();
  if (it->second.fd >= 0) close(it->second.fd);
  files_.erase(it);
}

nlohmann::json UnsyncedWrites::Crash(int source_fd, std::vector<uint64_t>* fuse_inos,
                                     std::vector<std::pair<uint64_t, std::string>>* gone_entries) {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<uint64_t> removed_files;
  for (const auto& [path, entry] : created_) removed_files.insert(entry.file);
  nlohmann::json files = nlohmann::json::array();
  uint64_t bytes = 0;
  for (auto& [key, file] : files_) {
    if (removed_files.count(key) != 0) {
      close(file.fd);  // the whole file goes below: nothing to restore
      continue;
    }
    nlohmann::json entry = {{"path", file.path}, {"writes_dropped", file.undo.size()}};
    std::string error;
    for (auto it = file.undo.rbegin(); it != file.undo.rend(); ++it) {
      if (pwrite(file.fd, it->old.data(), it->old.size(), static_cast<off_t>(it->offset)) !=
          static_cast<ssize_t>(it->old.size())) {
        error = "pwrite failed: errno " + std::to_string(errno);
      }
      bytes += it->old.size();
    }
    if (ftruncate(file.fd, static_cast<off_t>(file.synced_size)) != 0) error = "ftruncate failed: errno " + std::to_string(errno);
    if (file.overflowed) entry["incomplete"] = "more than 512 MiB unsynced; later writes were kept";
    if (!error.empty()) entry["error"] = error;
    entry["size"] = file.synced_size;
    files.push_back(entry);
    fuse_inos->push_back(file.fuse_ino);
    close(file.fd);
  }
  files_.clear();
  saved_bytes_ = 0;
  nlohmann::json removed = nlohmann::json::array();
  for (const auto& [path, entry] : created_) {
    if (unlinkat(source_fd, path.c_str(), 0) != 0 && errno != ENOENT) {
      files.push_back({{"path", path}, {"error", "unlink of the unsynced new file failed: errno " + std::to_string(errno)}});
      continue;
    }
    removed.push_back(path);
    gone_entries->emplace_back(entry.parent_ino, BaseName(path));
  }
  created_.clear();
  created_count_.store(0, std::memory_order_relaxed);
  return {{"files", files}, {"bytes_restored", bytes}, {"removed", removed}};
}

}  // namespace kvchaos::faultfs
