// HoldingAioOps: real libaio, except that completions of I/O on files under a chosen path prefix
// are held back until Release() — the kernel has done the I/O (into the attempt's own buffer) but
// the engine hears of it late, after its deadline: a completion that arrives after the timeout.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/store/tests/forwarding_aio_ops.h"

namespace kvchaos::store::testing {

class HoldingAioOps final : public ForwardingAioOps {
 public:
  // `path_of` names the file behind an fd; by default /proc/self/fd (which resolves symlinks, so
  // pass FaultFileOps::PathOf when backends are symlinks to one directory).
  explicit HoldingAioOps(std::function<std::string(int)> path_of = nullptr) : path_of_(std::move(path_of)) {}

  void HoldPrefix(std::string prefix, int count) {
    std::lock_guard<std::mutex> lock(mu_);
    prefix_ = std::move(prefix);
    hold_count_ = count;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
  }
  int held_total() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_total_;
  }

  int Submit(io_context_t ctx, long count, struct iocb** iocbs) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (long i = 0; i < count; ++i) {
        const int fd = iocbs[i]->aio_fildes;
        if (hold_count_ != 0 && (path_of_ ? path_of_(fd) : PathOf(fd)).rfind(prefix_, 0) == 0) {
          held_iocbs_.insert(iocbs[i]);
          if (hold_count_ > 0) --hold_count_;
          ++held_total_;
        }
      }
    }
    return ForwardingAioOps::Submit(ctx, count, iocbs);
  }
  int GetEvents(io_context_t ctx, long min_nr, long max_nr, struct io_event* events, struct timespec* timeout) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (released_ && !stash_.empty()) {
        long n = 0;
        while (n < max_nr && !stash_.empty()) {
          events[n++] = stash_.back();
          stash_.pop_back();
        }
        return static_cast<int>(n);
      }
    }
    const int r = ForwardingAioOps::GetEvents(ctx, min_nr, max_nr, events, timeout);
    if (r <= 0) return r;
    std::lock_guard<std::mutex> lock(mu_);
    int kept = 0;
    for (int i = 0; i < r; ++i) {
      if (!released_ && held_iocbs_.erase(events[i].obj) > 0) {
        stash_.push_back(events[i]);
      } else {
        events[kept++] = events[i];
      }
    }
    return kept;
  }

 private:
  std::function<std::string(int)> path_of_;
  std::mutex mu_;
  std::string prefix_;
  int hold_count_ = 0;
  int held_total_ = 0;
  bool released_ = false;
  std::set<struct iocb*> held_iocbs_;
  std::vector<struct io_event> stash_;
};

}  // namespace kvchaos::store::testing
