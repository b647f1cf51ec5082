// ScriptedBackend: a CoordinationBackend for elector tests. It forwards to a real
// CoordinationMemoryBackend (so lock semantics are the real ones) but lets the test park the next
// call of an operation before or after it reaches the store (a slow request or a slow response),
// make calls fail, silence an operation (its calls get no answer and time out at their deadline,
// as requests lost in an outage do with a client that honours deadlines), record the deadline of
// every call, and replace what GetLockHolder answers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/election/coordination_memory_backend.h"

namespace kvchaos::election::testing {

enum class Op { kTryLock, kRenewLock, kUnlock, kGetLockHolder, kRaiseTokenFloor };
enum class Phase { kBeforeCall, kAfterCall };

class ScriptedBackend final : public CoordinationBackend {
 public:
  explicit ScriptedBackend(Runtime& runtime) : runtime_(runtime), inner_(runtime) {}

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
  // While on, calls of `op` never reach the store: each waits until its deadline on the runtime's
  // clock and then fails with kTimeout (a call made while on stays lost after Silence(op, false)).
  void Silence(Op op, bool on) {
    std::lock_guard<std::mutex> lock(mu_);
    silenced_[op] = on;
  }
  // Deadlines of the calls of `op` so far, in call order.
  std::vector<MonoTime> Deadlines(Op op) {
    std::lock_guard<std::mutex> lock(mu_);
    return deadlines_[op];
  }
  // Runtime time at which each call of `op` returned to the caller, in order.
  std::vector<MonoTime> ReturnTimes(Op op) {
    std::lock_guard<std::mutex> lock(mu_);
    return returned_at_[op];
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
  Result<LockGrant> TryLock(std::string_view key, std::string_view holder, Duration lease,
                            MonoTime deadline) override {
    return Call<Result<LockGrant>>(Op::kTryLock, deadline,
                                   [&] { return inner_.TryLock(key, holder, lease, deadline); });
  }
  Status RenewLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override {
    return Call<Status>(Op::kRenewLock, deadline, [&] { return inner_.RenewLock(key, holder, lease, deadline); });
  }
  Status Unlock(std::string_view key, std::string_view holder, MonoTime deadline) override {
    return Call<Status>(Op::kUnlock, deadline, [&] { return inner_.Unlock(key, holder, deadline); });
  }
  Result<LockHolderInfo> GetLockHolder(std::string_view key, MonoTime deadline) override {
    return Call<Result<LockHolderInfo>>(Op::kGetLockHolder, deadline, [&]() -> Result<LockHolderInfo> {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (holder_override_) return *holder_override_;
      }
      return inner_.GetLockHolder(key, deadline);
    });
  }
  Result<FencingToken> RaiseTokenFloor(std::string_view key, std::string_view holder, FencingToken floor,
                                       MonoTime deadline) override {
    return Call<Result<FencingToken>>(Op::kRaiseTokenFloor, deadline,
                                      [&] { return inner_.RaiseTokenFloor(key, holder, floor, deadline); });
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

  bool Silenced(Op op) {
    std::lock_guard<std::mutex> lock(mu_);
    return silenced_[op];
  }

  // A silenced call: no answer until its deadline (polled on the runtime's clock; capped in real
  // time so that a failed test cannot hang its teardown).
  Status WaitOutDeadline(MonoTime deadline) {
    const auto cap = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (runtime_.Now() < deadline && std::chrono::steady_clock::now() < cap) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return Status::Timeout("scripted: no answer by the call's deadline");
  }

  void Returned(Op op) {
    std::lock_guard<std::mutex> lock(mu_);
    ++completed_[op];
    returned_at_[op].push_back(runtime_.Now());
  }

  template <typename R, typename F>
  R Call(Op op, MonoTime deadline, F&& f) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++calls_[op];
      deadlines_[op].push_back(deadline);
      auto it = failures_.find(op);
      if (it != failures_.end() && it->second.times != 0) {
        if (it->second.times > 0) --it->second.times;
        ++completed_[op];
        returned_at_[op].push_back(runtime_.Now());
        return it->second.status;
      }
    }
    if (Silenced(op)) {
      Status timed_out = WaitOutDeadline(deadline);
      Returned(op);
      return timed_out;
    }
    MaybePark(op, Phase::kBeforeCall);
    R r = f();
    MaybePark(op, Phase::kAfterCall);
    Returned(op);
    return r;
  }

  Runtime& runtime_;
  CoordinationMemoryBackend inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Op, Gate> gates_;
  std::map<Op, Failure> failures_;
  std::map<Op, int> calls_;
  std::map<Op, int> completed_;
  std::map<Op, bool> silenced_;
  std::map<Op, std::vector<MonoTime>> deadlines_;
  std::map<Op, std::vector<MonoTime>> returned_at_;
  std::optional<LockHolderInfo> holder_override_;
};

}  // namespace kvchaos::election::testing
