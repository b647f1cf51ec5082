// WorkerPool: the FUSE request loop of faultfs, in place of libfuse's fuse_session_loop_mt.
//
// Why not libfuse's loop: its idle workers all wait in read() on /dev/fuse, and the kernel wakes
// them first-in first-out, so a sequential application is served by a rotation of 2-10 threads,
// each woken cold, often on the other CPU. Measured on 2 cores: one thread serves 4 MiB direct
// reads about 1.5x faster than libfuse's 16-thread pool (README.md, Figures).
//
// Here two threads hold the "reader" role: they wait in read(), and each keeps the role while
// it serves the request it got, so back-to-back requests land on warm threads. Two, not one: a
// synchronous application's next request then finds a reader already waiting (on 2 vCPUs one
// reader served 4 KiB reads in 45 µs, two in 17 µs; 4 MiB reads and writes also gained).
// A reader hands its role on (to the most recently idle worker, or a new one up to the limit) when
//   - another request is already queued when it starts (poll() on the device says so), or
//   - the handler calls MayBlock(): before injected latency or hangs, fsync, and other calls
//     that can take long on a real disk.
// So a hung or slow call never holds up the others, and concurrent applications still fan out
// over up to max_threads workers.
//
// A reader that has just replied polls the device a moment before it blocks (SpinForNext): the
// next chunk of a large direct write comes ~30 µs after each reply, and a polling reader takes it
// without the cross-CPU wake-up a sleeping one needs. Each worker reads into its own pre-faulted
// huge-page buffer (worker_pool.cc, RecvBuffer) instead of libfuse's malloc'ed one.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kvchaos::faultfs {

class WorkerPool {
 public:
  // spin_us: how long a worker that has just replied may poll for the next request before it
  // blocks in read() (0: never; see SpinForNext).
  WorkerPool(fuse_session* se, int max_threads, int spin_us = kDefaultSpinUs);
  static constexpr int kDefaultSpinUs = 50;
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Serves requests on the calling thread and on up to max_threads - 1 more, until the session
  // ends (unmount, fuse_session_exit + Interrupt). Returns 0, or -errno of a device error.
  int Run();
  // Wakes every worker out of read() (SIGUSR1, whose handler must not restart calls) so that
  // they notice fuse_session_exit; call repeatedly until Run() returns.
  void Interrupt();

  // Called by a request handler before it may block for long: hands the reader role to another
  // worker so the queue keeps moving. A no-op outside a pool worker or when already handed on.
  static void MayBlock();
  // Called by a handler just before it replies. The kernel orders requests after the replies
  // they depend on (a release after the flush it follows), which thread sanitizers cannot see;
  // this release/acquire pair with the receiving worker states that order in C++ terms.
  static void BeforeReply();

 private:
  struct Worker;
  void Serve(Worker* me, bool has_role);
  void HandOff();  // the calling worker gives the reader role away
  // After a reply, polls the device for up to the worker's spin budget so that the next request
  // of a synchronous application (the next chunk of a large write) finds a running reader
  // instead of waking a sleeping one, a cross-CPU wake-up (an IPI, a VM exit in a guest).
  // True when a request came while it polled.
  bool SpinForNext(Worker* me, int fd, int64_t replied_ns);
  bool StartWorkerLocked(bool has_role);  // false when no thread could be started
  void StopLocked(int err);

  fuse_session* const se_;
  const int max_threads_;
  const int64_t spin_max_ns_;
  std::atomic<bool> spinning_{false};  // one worker spins at a time
  std::mutex mu_;
  std::condition_variable done_cv_;
  int readers_ = 0;               // guarded by mu_: workers that read or will read next (≤ kReaders)
  bool stopping_ = false;         // guarded by mu_
  int error_ = 0;                 // guarded by mu_
  int running_ = 0;               // guarded by mu_: workers inside Serve()
  std::vector<Worker*> idle_;     // guarded by mu_: LIFO, the warmest on top
  std::vector<Worker*> all_;      // guarded by mu_
  std::vector<std::thread> threads_;  // guarded by mu_
};

}  // namespace kvchaos::faultfs
