// RecordingRuntime: the real runtime, plus a record of every thread spawned through it (its name,
// whether its function still runs, whether it was joined). Tests use it to prove that a component
// starts its threads through kvchaos::Runtime, names them, and joins them when it stops.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/common/runtime.h"

namespace kvchaos::service::testing {

class RecordingRuntime final : public Runtime {
 public:
  MonoTime Now() override { return real_.Now(); }
  WallTime WallNow() override { return real_.WallNow(); }
  void SleepUntil(MonoTime deadline) override { real_.SleepUntil(deadline); }
  std::unique_ptr<MutexImpl> NewMutex() override { return real_.NewMutex(); }
  std::unique_ptr<CondVarImpl> NewCondVar() override { return real_.NewCondVar(); }

  Thread Spawn(std::string name, std::function<void()> fn) override {
    auto record = std::make_shared<Record>();
    record->name = name;
    {
      std::lock_guard<std::mutex> lock(mu_);
      records_.push_back(record);
    }
    Thread inner = real_.Spawn(std::move(name), [record, fn = std::move(fn)] {
      fn();
      record->returned = true;
    });
    return Thread(std::make_unique<JoinRecorder>(std::move(inner), record));
  }

  // Names of all threads spawned so far, in spawn order.
  std::vector<std::string> Spawned() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& r : records_) out.push_back(r->name);
    return out;
  }
  // Names of threads whose name starts with `prefix` that have not been joined yet.
  std::vector<std::string> Unjoined(const std::string& prefix) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& r : records_) {
      if (r->name.rfind(prefix, 0) == 0 && !r->joined) out.push_back(r->name);
    }
    return out;
  }

 private:
  struct Record {
    std::string name;
    std::atomic<bool> returned{false};
    std::atomic<bool> joined{false};
  };
  class JoinRecorder final : public ThreadImpl {
   public:
    JoinRecorder(Thread inner, std::shared_ptr<Record> record) : inner_(std::move(inner)), record_(std::move(record)) {}
    void Join() override {
      inner_.Join();
      record_->joined = true;
    }

   private:
    Thread inner_;
    std::shared_ptr<Record> record_;
  };

  Runtime& real_ = Runtime::Real();
  std::mutex mu_;
  std::vector<std::shared_ptr<Record>> records_;
};

}  // namespace kvchaos::service::testing
