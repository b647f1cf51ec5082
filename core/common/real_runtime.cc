#include "core/common/real_runtime.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/common/thread_util.h"

namespace kvchaos {
namespace {

class RealMutex final : public MutexImpl {
 public:
  void Lock() override { mu_.lock(); }
  void Unlock() override { mu_.unlock(); }
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

class RealCondVar final : public CondVarImpl {
 public:
  bool WaitUntil(MutexImpl& mu, MonoTime deadline) override {
    std::unique_lock<std::mutex> lock(static_cast<RealMutex&>(mu).native(), std::adopt_lock);
    const auto status = cv_.wait_until(lock, deadline);
    lock.release();  // the caller still owns the mutex
    return status == std::cv_status::no_timeout;
  }
  void Wait(MutexImpl& mu) override {
    std::unique_lock<std::mutex> lock(static_cast<RealMutex&>(mu).native(), std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  void NotifyOne() override { cv_.notify_one(); }
  void NotifyAll() override { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

class RealThread final : public ThreadImpl {
 public:
  explicit RealThread(std::thread thread) : thread_(std::move(thread)) {}
  ~RealThread() override { Join(); }
  void Join() override {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

}  // namespace

MonoTime RealRuntime::Now() { return MonoTime(std::chrono::steady_clock::now().time_since_epoch()); }

WallTime RealRuntime::WallNow() { return WallTime(std::chrono::system_clock::now().time_since_epoch()); }

void RealRuntime::SleepUntil(MonoTime deadline) {
  std::this_thread::sleep_until(std::chrono::steady_clock::time_point(deadline.time_since_epoch()));
}

Thread RealRuntime::Spawn(std::string name, std::function<void()> fn) {
  std::thread thread([name = std::move(name), fn = std::move(fn)]() {
    SetCurrentThreadName(name);
    fn();
  });
  return Thread(std::make_unique<RealThread>(std::move(thread)));
}

std::unique_ptr<MutexImpl> RealRuntime::NewMutex() { return std::make_unique<RealMutex>(); }

std::unique_ptr<CondVarImpl> RealRuntime::NewCondVar() { return std::make_unique<RealCondVar>(); }

}  // namespace kvchaos
