// The faultfs request loop; see worker_pool.h.
#include "faultfs/worker_pool.h"

#include <poll.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <system_error>

#include <spdlog/spdlog.h>

#include "core/common/thread_util.h"

namespace kvchaos::faultfs {

struct WorkerPool::Worker {
  pthread_t thread{};
  std::condition_variable cv;
  bool handed = false;  // guarded by mu_: the role was handed to this idle worker
};

namespace {
// How many workers hold the reader role at once (see Run()).
constexpr int kReaders = 2;
// The pool and whether the calling worker holds the reader role while serving a request.
thread_local WorkerPool* t_pool = nullptr;
thread_local bool t_has_role = false;
std::atomic<uint64_t> g_replies{0};  // see BeforeReply()

bool RequestQueued(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}
}  // namespace

WorkerPool::WorkerPool(fuse_session* se, int max_threads) : se_(se), max_threads_(max_threads < 1 ? 1 : max_threads) {}

WorkerPool::~WorkerPool() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    StopLocked(0);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
}

int WorkerPool::Run() {
  Worker main;
  {
    std::lock_guard<std::mutex> lock(mu_);
    readers_ = 1;
    ++running_;
    // A second reader waits in read() while the first serves, so a synchronous application's
    // next request is taken at once (with one reader, a 4 KiB read took 45 µs instead of 16 µs).
    if (kReaders > 1 && max_threads_ > 1 && StartWorkerLocked(true)) ++readers_;
  }
  Serve(&main, true);
  std::vector<std::thread> threads;
  {
    std::unique_lock<std::mutex> lock(mu_);
    StopLocked(0);
    done_cv_.wait(lock, [&] { return running_ == 0; });
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void WorkerPool::Interrupt() {
  std::lock_guard<std::mutex> lock(mu_);
  for (Worker* w : all_) pthread_kill(w->thread, SIGUSR1);
}

void WorkerPool::BeforeReply() { g_replies.fetch_add(1, std::memory_order_release); }

void WorkerPool::MayBlock() {
  if (t_pool != nullptr && t_has_role) t_pool->HandOff();
}

void WorkerPool::StopLocked(int err) {
  if (err != 0 && error_ == 0) error_ = err;
  stopping_ = true;
  for (Worker* w : idle_) w->cv.notify_one();
  idle_.clear();
}

bool WorkerPool::StartWorkerLocked(bool has_role) {
  ++running_;
  try {
    threads_.emplace_back([this, has_role] {
      Worker w;
      Serve(&w, has_role);
    });
  } catch (const std::system_error& e) {
    // Out of threads: the calling worker serves on alone rather than the daemon dying.
    --running_;
    spdlog::warn("faultfs: cannot start another worker: {}", e.what());
    return false;
  }
  return true;
}

void WorkerPool::HandOff() {
  t_has_role = false;
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  if (!idle_.empty()) {
    Worker* next = idle_.back();
    idle_.pop_back();
    next->handed = true;
    next->cv.notify_one();
  } else if (static_cast<int>(threads_.size()) + 1 < max_threads_ && StartWorkerLocked(true)) {
    // the new worker reads next
  } else {
    --readers_;  // every worker is busy: the first one done reads next
  }
}

void WorkerPool::Serve(Worker* me, bool has_role) {
  SetCurrentThreadName("faultfs_io");
  t_pool = this;
  me->thread = pthread_self();
  {
    std::lock_guard<std::mutex> lock(mu_);
    all_.push_back(me);
  }
  fuse_buf buf{};
  const int fd = fuse_session_fd(se_);
  while (true) {
    if (!has_role) {
      std::unique_lock<std::mutex> lock(mu_);
      if (!stopping_ && readers_ < kReaders) {
        ++readers_;
      } else {
        me->handed = false;
        if (!stopping_) idle_.push_back(me);
        me->cv.wait(lock, [&] { return me->handed || stopping_; });
        if (!me->handed) break;
      }
      has_role = true;
    }
    if (fuse_session_exited(se_)) break;
    const int res = fuse_session_receive_buf(se_, &buf);
    if (res == -EINTR || res == -EAGAIN) continue;
    if (res <= 0) {
      // 0 or -ENODEV: unmounted. Anything else is a device error worth reporting.
      fuse_session_exit(se_);
      std::lock_guard<std::mutex> lock(mu_);
      StopLocked(res == -ENODEV ? 0 : res);
      break;
    }
    (void)g_replies.load(std::memory_order_acquire);
    t_has_role = true;
    if (RequestQueued(fd)) HandOff();
    fuse_session_process_buf(se_, &buf);
    has_role = t_has_role;
    t_has_role = false;
  }
  std::free(buf.mem);
  std::lock_guard<std::mutex> lock(mu_);
  StopLocked(0);  // workers never retire: one ending means the session ended; wake the idle
  std::erase(all_, me);
  std::erase(idle_, me);
  if (--running_ == 0) done_cv_.notify_all();
}

}  // namespace kvchaos::faultfs
