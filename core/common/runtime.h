// Runtime: the one door through which the elector, the node service and the store's health
// monitor reach time, threads and waiting (the determinism contract of DESIGN.md). RealRuntime
// maps it to the operating system; the simulator (sim/) runs the same production code on virtual
// time with one simulated thread at a time. Code behind this interface must never sleep, wait or
// read a clock any other way, and must never yield while holding a Mutex.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/common/thread_annotations.h"

namespace kvchaos {

using Duration = std::chrono::nanoseconds;
// Monotonic time of the runtime (virtual in the simulator; per node, with drift).
using MonoTime = std::chrono::time_point<std::chrono::steady_clock, Duration>;
// Wall-clock time of the runtime (what a node would put in a log or a lease record).
using WallTime = std::chrono::time_point<std::chrono::system_clock, Duration>;

// Implementation hooks of a runtime; users hold Mutex, CondVar and Thread below instead.
class MutexImpl {
 public:
  virtual ~MutexImpl() = default;
  virtual void Lock() = 0;
  virtual void Unlock() = 0;
};

class CondVarImpl {
 public:
  virtual ~CondVarImpl() = default;
  // Atomically releases `mu`, waits for a notify or `deadline`, then re-acquires `mu`.
  // Returns false when the deadline passed (spurious wake-ups return true).
  virtual bool WaitUntil(MutexImpl& mu, MonoTime deadline) = 0;
  virtual void Wait(MutexImpl& mu) = 0;
  virtual void NotifyOne() = 0;
  virtual void NotifyAll() = 0;
};

class ThreadImpl {
 public:
  virtual ~ThreadImpl() = default;
  virtual void Join() = 0;
};

class Thread;

class Runtime {
 public:
  virtual ~Runtime() = default;

  virtual MonoTime Now() = 0;
  virtual WallTime WallNow() = 0;
  virtual void SleepUntil(MonoTime deadline) = 0;
  void SleepFor(Duration d) { SleepUntil(Now() + d); }

  // Starts `fn` on a new thread named `name` (at most 15 characters are kept by Linux).
  // The thread inherits the CPU affinity of its creator.
  virtual Thread Spawn(std::string name, std::function<void()> fn) = 0;

  virtual std::unique_ptr<MutexImpl> NewMutex() = 0;
  virtual std::unique_ptr<CondVarImpl> NewCondVar() = 0;

  // BUGGIFY: true asks the caller to take a rare path at `site` (a slow renew, a spurious error).
  // The real runtime always answers false; the simulator enables sites per run from its seed.
  virtual bool Buggify(std::string_view site) {
    (void)site;
    return false;
  }

  // The process-wide real runtime.
  static Runtime& Real();
};

// A thread of a runtime. Joins in its destructor if still joinable (like std::jthread).
class Thread {
 public:
  Thread() = default;
  explicit Thread(std::unique_ptr<ThreadImpl> impl) : impl_(std::move(impl)) {}
  Thread(Thread&&) noexcept = default;
  Thread& operator=(Thread&& other) noexcept {
    if (this != &other) {
      Join();
      impl_ = std::move(other.impl_);
    }
    return *this;
  }
  ~Thread() { Join(); }

  bool joinable() const { return impl_ != nullptr; }
  void Join() {
    if (impl_) {
      impl_->Join();
      impl_.reset();
    }
  }

 private:
  std::unique_ptr<ThreadImpl> impl_;
};

class CAPABILITY("mutex") Mutex {
 public:
  explicit Mutex(Runtime& runtime) : impl_(runtime.NewMutex()) {}
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { impl_->Lock(); }
  void Unlock() RELEASE() { impl_->Unlock(); }

 private:
  friend class CondVar;
  std::unique_ptr<MutexImpl> impl_;
};

class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

class CondVar {
 public:
  explicit CondVar(Runtime& runtime) : impl_(runtime.NewCondVar()) {}
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void Wait(Mutex& mu) REQUIRES(mu) { impl_->Wait(*mu.impl_); }
  // False when `deadline` passed without a notify.
  bool WaitUntil(Mutex& mu, MonoTime deadline) REQUIRES(mu) { return impl_->WaitUntil(*mu.impl_, deadline); }
  // Waits until `pred()` holds or `deadline` passes; returns pred() at the end.
  template <typename Pred>
  bool WaitUntil(Mutex& mu, MonoTime deadline, Pred pred) REQUIRES(mu) {
    while (!pred()) {
      if (!impl_->WaitUntil(*mu.impl_, deadline)) return pred();
    }
    return true;
  }
  template <typename Pred>
  void Wait(Mutex& mu, Pred pred) REQUIRES(mu) {
    while (!pred()) impl_->Wait(*mu.impl_);
  }
  void NotifyOne() { impl_->NotifyOne(); }
  void NotifyAll() { impl_->NotifyAll(); }

 private:
  std::unique_ptr<CondVarImpl> impl_;
};

// Milliseconds as a Duration, for config values kept in integer milliseconds.
constexpr Duration Millis(int64_t ms) { return std::chrono::milliseconds(ms); }
// Whole milliseconds of a duration (truncated), for logs and JSON.
constexpr int64_t ToMillis(Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

}  // namespace kvchaos
