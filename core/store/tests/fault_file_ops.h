// FaultFileOps: FileOps over the real OS where a test makes chosen calls on chosen paths fail with
// an errno, return only after a delay (the real call then still happens, late), hang until released,
// or corrupt what a read returns. Calls are matched by operation and path prefix (for fd-based
// calls, the path the fd was opened with), and counted per operation and prefix.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/store/file_ops.h"

namespace kvchaos::store::testing {

enum class Op { kOpen, kWrite, kRead, kFsync, kFdatasync, kFallocate, kClose, kUnlink, kRename, kMkdir, kStat };

struct FaultRule {
  Op op = Op::kOpen;
  std::string prefix;                   // matches paths starting with it
  int err = 0;                          // > 0: fail with this errno
  std::chrono::milliseconds delay{0};   // sleep first, then do the real call
  bool hang = false;                    // wait until Release(), then do the real call
  bool corrupt = false;                 // reads: flip the first byte returned
  int times = -1;                       // how many matching calls it applies to (-1: all)
};

class FaultFileOps final : public ForwardingFileOps {
 public:
  FaultFileOps() : ForwardingFileOps(FileOps::Real()) {}

  void Add(FaultRule rule) {
    std::lock_guard<std::mutex> lock(mu_);
    rules_.push_back(std::move(rule));
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    rules_.clear();
  }
  // Lets every hanging call go on.
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  // Matching calls seen so far (counted before any fault applies).
  int Count(Op op, const std::string& prefix) {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const auto& [key, path] : calls_) {
      if (key == op && path.rfind(prefix, 0) == 0) ++n;
    }
    return n;
  }
  // Every call seen so far, in order: the operation and its path (for fd calls, the path the fd
  // was opened with; for a rename, its source).
  std::vector<std::pair<Op, std::string>> Calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  std::vector<int> open_flags(const std::string& prefix) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<int> out;
    for (const auto& [path, flags] : open_flags_) {
      if (path.rfind(prefix, 0) == 0) out.push_back(flags);
    }
    return out;
  }

  int Open(const std::string& path, int flags, mode_t mode) override {
    if (int r = Apply(Op::kOpen, path); r != 0) return r;
    const int fd = base_.Open(path, flags, mode);
    std::lock_guard<std::mutex> lock(mu_);
    open_flags_.emplace_back(path, flags);
    if (fd >= 0) fd_paths_[fd] = path;
    return fd;
  }
  ssize_t Pwrite(int fd, const void* buf, size_t len, off_t offset) override {
    if (int r = Apply(Op::kWrite, PathOf(fd)); r != 0) return r;
    return base_.Pwrite(fd, buf, len, offset);
  }
  ssize_t Pread(int fd, void* buf, size_t len, off_t offset) override {
    bool corrupt = false;
    if (int r = Apply(Op::kRead, PathOf(fd), &corrupt); r != 0) return r;
    const ssize_t n = base_.Pread(fd, buf, len, offset);
    if (corrupt && n > 0) static_cast<unsigned char*>(buf)[0] ^= 0xff;
    return n;
  }
  ssize_t Pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) override {
    if (int r = Apply(Op::kWrite, PathOf(fd)); r != 0) return r;
    return base_.Pwritev(fd, iov, iovcnt, offset);
  }
  ssize_t Preadv(int fd, const struct iovec* iov, int iovcnt, off_t offset) override {
    bool corrupt = false;
    if (int r = Apply(Op::kRead, PathOf(fd), &corrupt); r != 0) return r;
    const ssize_t n = base_.Preadv(fd, iov, iovcnt, offset);
    if (corrupt && n > 0) static_cast<unsigned char*>(iov[0].iov_base)[0] ^= 0xff;
    return n;
  }
  int Fsync(int fd) override {
    if (int r = Apply(Op::kFsync, PathOf(fd)); r != 0) return r;
    return base_.Fsync(fd);
  }
  int Fdatasync(int fd) override {
    if (int r = Apply(Op::kFdatasync, PathOf(fd)); r != 0) return r;
    return base_.Fdatasync(fd);
  }
  int Fallocate(int fd, off_t offset, off_t len) override {
    if (int r = Apply(Op::kFallocate, PathOf(fd)); r != 0) return r;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fallocate_lengths_.push_back(len);
    }
    return base_.Fallocate(fd, offset, len);
  }
  // Lengths passed to the fallocate calls that reached the OS.
  std::vector<off_t> fallocate_lengths() {
    std::lock_guard<std::mutex> lock(mu_);
    return fallocate_lengths_;
  }
  int Close(int fd) override {
    const std::string path = PathOf(fd);
    {
      std::lock_guard<std::mutex> lock(mu_);
      fd_paths_.erase(fd);
    }
    const int r = base_.Close(fd);  // always release the descriptor, then report the fault
    if (int f = Apply(Op::kClose, path); f != 0) return f;
    return r;
  }
  int Unlink(const std::string& path) override {
    if (int r = Apply(Op::kUnlink, path); r != 0) return r;
    return base_.Unlink(path);
  }
  int Rename(const std::string& from, const std::string& to) override {
    if (int r = Apply(Op::kRename, from); r != 0) return r;
    return base_.Rename(from, to);
  }
  int Mkdir(const std::string& path, mode_t mode) override {
    if (int r = Apply(Op::kMkdir, path); r != 0) return r;
    return base_.Mkdir(path, mode);
  }
  int Stat(const std::string& path, bool* is_dir, off_t* size) override {
    if (int r = Apply(Op::kStat, path); r != 0) return r;
    return base_.Stat(path, is_dir, size);
  }

  // The path `fd` was opened with ("" if unknown).
  std::string PathOf(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = fd_paths_.find(fd);
    return it == fd_paths_.end() ? std::string() : it->second;
  }

 private:

  // 0: go on with the real call; -1 with errno set: fail.
  int Apply(Op op, const std::string& path, bool* corrupt = nullptr) {
    std::unique_lock<std::mutex> lock(mu_);
    calls_.emplace_back(op, path);
    for (FaultRule& rule : rules_) {
      if (rule.op != op || path.rfind(rule.prefix, 0) != 0 || rule.times == 0) continue;
      if (rule.times > 0) --rule.times;
      const FaultRule applied = rule;
      if (applied.hang) cv_.wait(lock, [&] { return released_; });
      if (applied.delay.count() > 0) {
        lock.unlock();
        std::this_thread::sleep_for(applied.delay);
        lock.lock();
      }
      if (applied.corrupt && corrupt != nullptr) *corrupt = true;
      if (applied.err > 0) {
        errno = applied.err;
        return -1;
      }
      return 0;
    }
    return 0;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  std::vector<FaultRule> rules_;
  std::vector<std::pair<Op, std::string>> calls_;
  std::vector<std::pair<std::string, int>> open_flags_;
  std::map<int, std::string> fd_paths_;
  std::vector<off_t> fallocate_lengths_;
};

}  // namespace kvchaos::store::testing
