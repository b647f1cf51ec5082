// The faultfs request loop; see worker_pool.h.
#include "faultfs/worker_pool.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
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
  int64_t spin_ns = 0;  // this worker's spin budget after a reply (adapts, see SpinForNext)
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

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Spin budget of a worker (after each reply it holds the reader role): a spin that ran out
// halves it, below kSpinMinNs spinning is off; a request that came while the worker was blocked,
// within the maximum of its reply, sets it to twice that gap. So a steady stream of requests
// (the chunks of a large write come ~30 µs after each reply) keeps it, and a slow or idle
// application turns it off after a few replies.
constexpr int64_t kSpinMinNs = 4000;

// The receive buffer of a worker. libfuse reads each request (header, then up to max_write
// bytes of data) into buf.mem, which it allocates with malloc (a fresh mmap of 4 KiB pages) unless
// it is set. Ours is one 2 MiB transparent huge page, faulted in once: the kernel pins the
// buffer page by page when it copies a write's data into it, and pwrite reads it back, so 4 KiB
// pages cost a page walk (two-dimensional in a VM) per 4 KiB twice per request. A write's data
// follows 80 bytes of headers; the buffer starts 80 bytes before a page boundary so that the data
// is page-aligned, as the source file's pages are.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kWriteHeaders = 80;  // sizeof(fuse_in_header) + sizeof(fuse_write_in)
struct RecvBuffer {
  RecvBuffer() {
    // Twice the size, to cut a 2 MiB-aligned huge page out of it.
    void* p = mmap(nullptr, 2 * kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;  // libfuse then allocates its own
    map = static_cast<uint8_t*>(p);
    auto* huge = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1));
    (void)madvise(huge, kHugePage, MADV_HUGEPAGE);  // a hint: 4 KiB pages still work
    for (size_t i = 0; i < kHugePage; i += 4096) huge[i] = 0;
    // libfuse reads at most max_write + 4 KiB (≤ 1 MiB + 4 KiB), which fits after the offset.
    mem = huge + 4096 - kWriteHeaders;
  }
  ~RecvBuffer() {
    if (map != nullptr) munmap(map, 2 * kHugePage);
  }
  RecvBuffer(const RecvBuffer&) = delete;
  RecvBuffer& operator=(const RecvBuffer&) = delete;
  uint8_t* map = nullptr;
  void* mem = nullptr;
};
}  // namespace

WorkerPool::WorkerPool(fuse_session* se, int max_threads, int spin_us)
    : se_(se), max_threads_(max_threads < 1 ? 1 : max_threads), spin_max_ns_(spin_us > 0 ? int64_t{spin_us} * 1000 : 0) {}

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
  RecvBuffer recv;
  fuse_buf buf{};
  buf.mem = recv.mem;
  const int fd = fuse_session_fd(se_);
  me->spin_ns = spin_max_ns_;
  int64_t replied_ns = 0;  // when this worker last replied still holding the role (0: not)
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
    const bool spun_hit = replied_ns != 0 && SpinForNext(me, fd, replied_ns);
    const int res = fuse_session_receive_buf(se_, &buf);
    if (replied_ns != 0 && res > 0 && !spun_hit) {
      // Blocked: a spin of twice this gap would have caught the request.
      const int64_t gap_ns = NowNs() - replied_ns;
      if (gap_ns <= spin_max_ns_) me->spin_ns = std::clamp(2 * gap_ns, kSpinMinNs, spin_max_ns_);
    }
    replied_ns = 0;
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
    if (has_role && spin_max_ns_ > 0) replied_ns = NowNs();
  }
  if (buf.mem != recv.mem) std::free(buf.mem);
  std::lock_guard<std::mutex> lock(mu_);
  StopLocked(0);  // workers never retire: one ending means the session ended; wake the idle
  std::erase(all_, me);
  std::erase(idle_, me);
  if (--running_ == 0) done_cv_.notify_all();
}

bool WorkerPool::SpinForNext(Worker* me, int fd, int64_t replied_ns) {
  if (me->spin_ns < kSpinMinNs) return false;
  // One spinner at a time: two would hold both CPUs of a small VM away from the application.
  bool expected = false;
  if (!spinning_.compare_exchange_strong(expected, true, std::memory_order_acquire)) return false;
  const int64_t deadline = replied_ns + me->spin_ns;
  bool hit = false;
  do {
    if (RequestQueued(fd)) {
      hit = true;
      break;
    }
    // Polite: a thread waiting for this CPU (the application itself, or anything else) runs
    // first; with nothing waiting this returns at once.
    sched_yield();
  } while (NowNs() < deadline);
  spinning_.store(false, std::memory_order_release);
  if (!hit) me->spin_ns /= 2;
  return hit;
}

}  // namespace kvchaos::faultfs
