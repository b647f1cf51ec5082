// TempFiles: bookkeeping of write attempts per block and removal of abandoned temp files (see
// temp_files.h).
#include "core/store/temp_files.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace kvchaos::store {

void TempFiles::Begin(const BlockId& block) {
  MutexLock lock(mu_);
  // Never let a new attempt open the file while an unlink of the same name may still be under way.
  while (blocks_[block].removing) cv_.Wait(mu_);
  ++blocks_[block].running;
}

void TempFiles::End(const BlockId& block, bool written, const std::string& tmp_path) {
  MutexLock lock(mu_);
  Entry& entry = blocks_[block];
  --entry.running;
  if (written) {
    entry.awaiting_commit = true;
    if (std::find(entry.written.begin(), entry.written.end(), tmp_path) == entry.written.end()) {
      entry.written.push_back(tmp_path);
    }
  } else if (std::find(entry.strays.begin(), entry.strays.end(), tmp_path) == entry.strays.end()) {
    entry.strays.push_back(tmp_path);
  }
  CleanIfQuiet(block);
}

void TempFiles::Resolve(const BlockId& block, const std::vector<std::string>& unused) {
  MutexLock lock(mu_);
  Entry& entry = blocks_[block];
  entry.awaiting_commit = false;
  entry.written.clear();
  for (const std::string& path : unused) {
    if (std::find(entry.strays.begin(), entry.strays.end(), path) == entry.strays.end()) entry.strays.push_back(path);
  }
  CleanIfQuiet(block);
}

void TempFiles::Abandon(const BlockId& block) {
  MutexLock lock(mu_);
  auto it = blocks_.find(block);
  if (it == blocks_.end()) return;
  Entry& entry = it->second;
  entry.awaiting_commit = false;
  for (std::string& path : entry.written) {
    if (std::find(entry.strays.begin(), entry.strays.end(), path) == entry.strays.end()) {
      entry.strays.push_back(std::move(path));
    }
  }
  entry.written.clear();
  CleanIfQuiet(block);
}

std::vector<std::string> TempFiles::Written(const BlockId& block) {
  MutexLock lock(mu_);
  auto it = blocks_.find(block);
  return it == blocks_.end() ? std::vector<std::string>{} : it->second.written;
}

size_t TempFiles::tracked() {
  MutexLock lock(mu_);
  return blocks_.size();
}

void TempFiles::CleanIfQuiet(const BlockId& block) {
  for (;;) {
    auto it = blocks_.find(block);
    if (it == blocks_.end()) return;
    Entry& entry = it->second;
    if (entry.running > 0 || entry.awaiting_commit || entry.removing) return;
    if (entry.strays.empty()) {
      blocks_.erase(it);
      return;
    }
    std::vector<std::string> strays = std::move(entry.strays);
    entry.strays.clear();
    entry.removing = true;  // keeps the entry, and new attempts of the block, waiting
    mu_.Unlock();
    for (const std::string& path : strays) {
      if (ops_.Unlink(path) == 0) {
        spdlog::debug("removed abandoned temp file '{}'", path);
      } else if (const int err = errno; err != ENOENT) {
        spdlog::warn("cannot remove abandoned temp file '{}': {}", path, std::strerror(err));
      }
    }
    mu_.Lock();
    blocks_[block].removing = false;
    cv_.NotifyAll();
    // Loop: a Resolve may have added strays meanwhile.
  }
}

}  // namespace kvchaos::store
