// WatchedBackend: a CoordinationBackend that forwards every call to the node's real backend and
// remembers when the backend last *answered* — any reply, including "lock held by someone else" or
// "not found", but not Unavailable/Timeout/IoError (the backend could not be reached). The elector
// (campaign/renew every loop interval) and the heartbeat thread all call through it, so CheckHealth
// can tell "the coordination backend went silent" from "this node simply is not the leader".
#pragma once

#include <memory>
#include <optional>

#include "core/common/runtime.h"
#include "core/common/thread_annotations.h"
#include "core/election/coordination_backend.h"

namespace kvchaos::service {

class WatchedBackend final : public election::CoordinationBackend {
 public:
  WatchedBackend(Runtime& runtime, std::unique_ptr<election::CoordinationBackend> inner);

  // Runtime time of the last answer; nullopt before the first.
  std::optional<MonoTime> last_answer();

  Status Init() override { return Seen(inner_->Init()); }
  Result<election::LockGrant> TryLock(std::string_view key, std::string_view holder, Duration lease,
                                      MonoTime deadline) override {
    return Seen(inner_->TryLock(key, holder, lease, deadline));
  }
  Status RenewLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override {
    return Seen(inner_->RenewLock(key, holder, lease, deadline));
  }
  Status Unlock(std::string_view key, std::string_view holder, MonoTime deadline) override {
    return Seen(inner_->Unlock(key, holder, deadline));
  }
  Result<election::LockHolderInfo> GetLockHolder(std::string_view key, MonoTime deadline) override {
    return Seen(inner_->GetLockHolder(key, deadline));
  }
  Result<election::FencingToken> RaiseTokenFloor(std::string_view key, std::string_view holder,
                                                 election::FencingToken floor, MonoTime deadline) override {
    return Seen(inner_->RaiseTokenFloor(key, holder, floor, deadline));
  }
  Status SetValue(std::string_view key, std::string_view value) override { return Seen(inner_->SetValue(key, value)); }
  Status SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) override {
    return Seen(inner_->SetValueWithTtl(key, value, ttl));
  }
  Result<std::string> GetValue(std::string_view key) override { return Seen(inner_->GetValue(key)); }
  Status DeleteValue(std::string_view key) override { return Seen(inner_->DeleteValue(key)); }
  Result<std::vector<election::KeyValue>> ListValues(std::string_view prefix) override {
    return Seen(inner_->ListValues(prefix));
  }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  // True when `code` means the backend replied (as opposed to: could not be reached).
  static bool Answered(StatusCode code);
  void Record(StatusCode code);
  Status Seen(Status s) {
    Record(s.code());
    return s;
  }
  template <typename T>
  Result<T> Seen(Result<T> r) {
    Record(r.ok() ? StatusCode::kOk : r.status().code());
    return r;
  }

  Runtime& runtime_;
  std::unique_ptr<election::CoordinationBackend> inner_;
  Mutex mu_;
  std::optional<MonoTime> last_answer_ GUARDED_BY(mu_);
};

}  // namespace kvchaos::service
