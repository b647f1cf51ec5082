// Undo log of unsynced writes; see unsynced_writes.h.
#include "faultfs/unsynced_writes.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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

void UnsyncedWrites::Synced(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = files_.find(key);
  if (it == files_.end()) return;
  for (const Undo& undo : it->second.undo) saved_bytes_ -= undo.old.size();
  if (it->second.fd >= 0) close(it->second.fd);
  files_.erase(it);
}

nlohmann::json UnsyncedWrites::Crash(std::vector<uint64_t>* fuse_inos) {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json files = nlohmann::json::array();
  uint64_t bytes = 0;
  for (auto& [key, file] : files_) {
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
  return {{"files", files}, {"bytes_restored", bytes}};
}

}  // namespace kvchaos::faultfs
