// WatchedBackend: a CoordinationBackend that forwards every call to the node's real backend and
// remembers when the backend last *answered* — any reply, including "lock held by someone else" or
// "not found", but not Unavailable/Timeout/IoError (the backend could not be reached). The elector
// (campaign/renew every loop interval) and the heartbeat thread all call through it, so CheckHealth
// can tell "the coordination backend went silent" from "this node simply is not the leader".
// It also counts every call by name and result code and times it (metrics(): the node's /metrics
// shows them as kvchaos_node_coordination_requests_total and _request_duration_seconds).
#pragma once

#include <memory>
#include <optional>

#include "core/common/metrics.h"
#include "core/common/runtime.h"
#include "core/common/thread_annotations.h"
#include "core/election/coordination_backend.h"

namespace kvchaos::service {

class WatchedBackend final : public election::CoordinationBackend {
 public:
  WatchedBackend(Runtime& runtime, std::unique_ptr<election::CoordinationBackend> inner);

  // Runtime time of the last answer; nullopt before the first.
  std::optional<MonoTime> last_answer();
  // Calls by name and code, and their durations.
  const MetricsRegistry& metrics() const { return metrics_; }

  Status Init() override {
    return Timed("Init", [&] { return inner_->Init(); });
  }
  Result<election::LockGrant> TryLock(std::string_view key, std::string_view holder, Duration lease,
                                      MonoTime deadline) override {
    return Timed("TryLock", [&] { return inner_->TryLock(key, holder, lease, deadline); });
  }
  Status RenewLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override {
    return Timed("RenewLock", [&] { return inner_->RenewLock(key, holder, lease, deadline); });
  }
  Status Unlock(std::string_view key, std::string_view holder, MonoTime deadline) override {
    return Timed("Unlock", [&] { return inner_->Unlock(key, holder, deadline); });
  }
  Result<election::LockHolderInfo> GetLockHolder(std::string_view key, MonoTime deadline) override {
    return Timed("GetLockHolder", [&] { return inner_->GetLockHolder(key, deadline); });
  }
  Result<election::FencingToken> RaiseTokenFloor(std::string_view key, std::string_view holder,
                                                 election::FencingToken floor, MonoTime deadline) override {
    return Timed("RaiseTokenFloor", [&] { return inner_->RaiseTokenFloor(key, holder, floor, deadline); });
  }
  Status SetValue(std::string_view key, std::string_view value) override {
    return Timed("SetValue", [&] { return inner_->SetValue(key, value); });
  }
  Status SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) override {
    return Timed("SetValueWithTtl", [&] { return inner_->SetValueWithTtl(key, value, ttl); });
  }
  Result<std::string> GetValue(std::string_view key) override {
    return Timed("GetValue", [&] { return inner_->GetValue(key); });
  }
  Status DeleteValue(std::string_view key) override {
    return Timed("DeleteValue", [&] { return inner_->DeleteValue(key); });
  }
  Result<std::vector<election::KeyValue>> ListValues(std::string_view prefix) override {
    return Timed("ListValues", [&] { return inner_->ListValues(prefix); });
  }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  // True when `code` means the backend replied (as opposed to: could not be reached).
  static bool Answered(StatusCode code);
  // Counts and times one call that began at `begun`, and timestamps an answer.
  void Record(std::string_view call, MonoTime begun, StatusCode code);
  static StatusCode CodeOf(const Status& s) { return s.code(); }
  template <typename T>
  static StatusCode CodeOf(const Result<T>& r) {
    return r.ok() ? StatusCode::kOk : r.status().code();
  }
  template <typename F>
  auto Timed(std::string_view call, F&& forward) -> decltype(forward()) {
    const MonoTime begun = runtime_.Now();
    auto result = forward();
    Record(call, begun, CodeOf(result));
    return result;
  }

  Runtime& runtime_;
  std::unique_ptr<election::CoordinationBackend> inner_;
  Mutex mu_;
  std::optional<MonoTime> last_answer_ GUARDED_BY(mu_);
  // A leaf lock of its own (metrics.h), taken after the call returned: never across a wait.
  MetricsRegistry metrics_;
};

}  // namespace kvchaos::service
