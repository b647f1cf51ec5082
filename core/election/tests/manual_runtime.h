// ManualRuntime: a kvchaos::Runtime for elector tests whose clock moves only when the test calls
// Advance(). Threads are real std::threads (so races are real), but every sleep and timed wait
// ends on *manual* time, which lets a test hold the lease clock still while it parks backend calls
// and lets it jump past a deadline without waiting. Waits poll the manual clock every millisecond
// of real time, which keeps the implementation free of lost-wake-up subtleties.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/common/runtime.h"
#include "core/common/thread_util.h"

namespace kvchaos::election::testing {

class ManualRuntime final : public Runtime {
 public:
  // Starts at an arbitrary non-zero time so "time zero" bugs show.
  ManualRuntime() : now_(MonoTime(std::chrono::hours(1000))) {}

  MonoTime Now() override {
    std::lock_guard<std::mutex> lock(time_mu_);
    return now_;
  }
  WallTime WallNow() override {
    // 2026-01-01T00:00:00Z plus manual time elapsed.
    return WallTime(std::chrono::seconds(1767225600)) + (Now() - MonoTime(std::chrono::hours(1000)));
  }
  void SleepUntil(MonoTime deadline) override {
    std::unique_lock<std::mutex> lock(time_mu_);
    time_cv_.wait(lock, [&] { return now_ >= deadline; });
  }
  Thread Spawn(std::string name, std::function<void()> fn) override {
    std::thread t([name = std::move(name), fn = std::move(fn)] {
      SetCurrentThreadName(name);
      fn();
    });
    return Thread(std::make_unique<StdThread>(std::move(t)));
  }
  std::unique_ptr<MutexImpl> NewMutex() override { return std::make_unique<StdMutex>(); }
  std::unique_ptr<CondVarImpl> NewCondVar() override { return std::make_unique<ManualCondVar>(*this); }
  bool Buggify(std::string_view site) override {
    std::lock_guard<std::mutex> lock(time_mu_);
    return buggify_site_ == site;
  }

  void Advance(Duration d) {
    {
      std::lock_guard<std::mutex> lock(time_mu_);
      now_ += d;
    }
    time_cv_.notify_all();
  }
  // Buggify answers true for this one site ("" = none).
  void SetBuggifySite(std::string site) {
    std::lock_guard<std::mutex> lock(time_mu_);
    buggify_site_ = std::move(site);
  }

 private:
  class StdMutex final : public MutexImpl {
   public:
    void Lock() override { mu_.lock(); }
    void Unlock() override { mu_.unlock(); }
    // BasicLockable for std::condition_variable_any.
    void lock() { mu_.lock(); }
    void unlock() { mu_.unlock(); }

   private:
    std::mutex mu_;
  };
  class ManualCondVar final : public CondVarImpl {
   public:
    explicit ManualCondVar(ManualRuntime& rt) : rt_(rt) {}
    bool WaitUntil(MutexImpl& mu, MonoTime deadline) override {
      auto& m = static_cast<StdMutex&>(mu);
      const uint64_t seen = notifies_.load();
      while (rt_.Now() < deadline) {
        cv_.wait_for(m, std::chrono::milliseconds(1));
        if (notifies_.load() != seen) return true;
      }
      return false;
    }
    void Wait(MutexImpl& mu) override {
      auto& m = static_cast<StdMutex&>(mu);
      const uint64_t seen = notifies_.load();
      while (notifies_.load() == seen) cv_.wait_for(m, std::chrono::milliseconds(1));
    }
    void NotifyOne() override { NotifyAll(); }
    void NotifyAll() override {
      notifies_.fetch_add(1);
      cv_.notify_all();
    }

   private:
    ManualRuntime& rt_;
    std::condition_variable_any cv_;
    std::atomic<uint64_t> notifies_{0};
  };
  class StdThread final : public ThreadImpl {
   public:
    explicit StdThread(std::thread t) : t_(std::move(t)) {}
    ~StdThread() override { Join(); }
    void Join() override {
      if (t_.joinable()) t_.join();
    }

   private:
    std::thread t_;
  };

  std::mutex time_mu_;
  std::condition_variable time_cv_;
  MonoTime now_;
  std::string buggify_site_;
};

// Polls `pred` for up to `timeout` of real time; true when it held.
inline bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

}  // namespace kvchaos::election::testing
