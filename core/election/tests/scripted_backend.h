// ScriptedBackend: a CoordinationBackend for elector tests. It forwards to a real
// CoordinationMemoryBackend (so lock semantics are the real ones) but lets the test park the next
// call of an operation before or after it reaches the store (a slow request or a slow response),
// make calls fail, and replace what GetLockHolder answers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

#include "core/election/coordination_memory_backend.h"

namespace kvchaos::election::testing {

enum class Op { kTryLock, kRenewLock, kUnlock, kGetLockHolder, kRaiseTokenFloor };
enum class Phase { kBeforeCall, kAfterCall };

class ScriptedBackend final : public CoordinationBackend {
 public:
  explicit ScriptedBackend(Runtime& runtime) : inner_(runtime) {}

  // The next call of `op` parks at `phase` until Release(op).
  void ParkNext(Op op, Phase phase) {
    std::lock_guard<std::mutex> lock(mu_);
    gates_[op] = Gate{phase, false, false};
  }
  // True once a call is parked at the gate of `op` (waits up to `timeout` of real time).
  bool WaitParked(Op op, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return gates_.count(op) && gates_[op].parked; });
  }
  void Release(Op op) {
    std::lock_guard<std::mutex> lock(mu_);
    if (gates_.count(op)) gates_[op].released = true;
    cv_.notify_all();
  }
  // The next `times` calls of `op` fail with `status` without reaching the store (< 0: until cleared).
  void Fail(Op op, Status status, int times) {
    std::lock_guard<std::mutex> lock(mu_);
    failures_[op] = {std::move(status), times};
  }
  void ClearFailures() {
    std::lock_guard<std::mutex> lock(mu_);
    failures_.clear();
  }
  // GetLockHolder answers this instead of the store's view (nullopt: the store's view).
  void OverrideHolder(std::optional<LockHolderInfo> info) {
    std::lock_guard<std::mutex> lock(mu_);
    holder_override_ = std::move(info);
  }
  int Calls(Op op) {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_[op];
  }
  // Calls of `op` that have returned to the caller.
  int Completed(Op op) {
    std::lock_guard<std::mutex> lock(mu_);
    return completed_[op];
  }
  CoordinationMemoryBackend& store() { return inner_; }

  Status Init() override { return Status::Ok(); }
  Result<LockGrant> TryLock(std::string_view key, std::string_view holder, Duration lease) override {
    return Call<Result<LockGrant>>(Op::kTryLock, [&] { return inner_.TryLock(key, holder, lease); });
  }
  Status RenewLock(std::string_view key, std::string_view holder, Duration lease) override {
    return Call<Status>(Op::kRenewLock, [&] { return inner_.RenewLock(key, holder, lease); });
  }
  Status Unlock(std::string_view key, std::string_view holder) override {
    return Call<Status>(Op::kUnlock, [&] { return inner_.Unlock(key, holder); });
  }
  Result<LockHolderInfo> GetLockHolder(std::string_view key) override {
    return Call<Result<LockHolderInfo>>(Op::kGetLockHolder, [&]() -> Result<LockHolderInfo> {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (holder_override_) return *holder_override_;
      }
      return inner_.GetLockHolder(key);
    });
  }
  Result<FencingToken> RaiseTokenFloor(std::string_view key, std::string_view holder, FencingToken floor) override {
    return Call<Result<FencingToken>>(Op::kRaiseTokenFloor, [&] { return inner_.RaiseTokenFloor(key, holder, floor); });
  }
  Status SetValue(std::string_view key, std::string_view value) override { return inner_.SetValue(key, value); }
  Status SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) override {
    return inner_.SetValueWithTtl(key, value, ttl);
  }
  Result<std::string> GetValue(std::string_view key) override { return inner_.GetValue(key); }
  Status DeleteValue(std::string_view key) override { return inner_.DeleteValue(key); }
  Result<std::vector<KeyValue>> ListValues(std::string_view prefix) override { return inner_.ListValues(prefix); }
  std::string Describe() const override { return "scripted(memory://)"; }

 private:
  struct Gate {
    Phase phase;
    bool parked;
    bool released;
  };
  struct Failure {
    Status status;
    int times;
  };

  void MaybePark(Op op, Phase phase) {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = gates_.find(op);
    if (it == gates_.end() || it->second.phase != phase || it->second.parked) return;
    it->second.parked = true;
    cv_.notify_all();
    // Capped so that a failed test cannot hang its teardown.
    cv_.wait_for(lock, std::chrono::seconds(20), [&] { return gates_[op].released; });
    gates_.erase(op);
  }

  template <typename R, typename F>
  R Call(Op op, F&& f) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++calls_[op];
      auto it = failures_.find(op);
      if (it != failures_.end() && it->second.times != 0) {
        if (it->second.times > 0) --it->second.times;
        ++completed_[op];
        return it->second.status;
      }
    }
    MaybePark(op, Phase::kBeforeCall);
    R r = f();
    MaybePark(op, Phase::kAfterCall);
    std::lock_guard<std::mutex> lock(mu_);
    ++completed_[op];
    return r;
  }

  CoordinationMemoryBackend inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Op, Gate> gates_;
  std::map<Op, Failure> failures_;
  std::map<Op, int> calls_;
  std::map<Op, int> completed_;
  std::optional<LockHolderInfo> holder_override_;
};

}  // namespace kvchaos::election::testing
