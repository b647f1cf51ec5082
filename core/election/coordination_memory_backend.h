// CoordinationMemoryBackend: locks and values in this process's memory, for a single node and for
// tests (several electors of one process may share one instance). Expiry uses the Runtime's
// monotonic clock, so it also runs under the simulator's virtual time. Nothing survives the process
// (Wipe() loses everything on purpose, for tests).
#pragma once

#include <map>
#include <string>

#include "core/common/runtime.h"
#include "core/election/coordination_backend.h"

namespace kvchaos::election {

class CoordinationMemoryBackend final : public CoordinationBackend {
 public:
  explicit CoordinationMemoryBackend(Runtime& runtime);

  Status Init() override { return Status::Ok(); }
  // Lock calls never wait, so they meet any deadline; it is not looked at.
  Result<LockGrant> TryLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override;
  Status RenewLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override;
  Status Unlock(std::string_view key, std::string_view holder, MonoTime deadline) override;
  Result<LockHolderInfo> GetLockHolder(std::string_view key, MonoTime deadline) override;
  Result<FencingToken> RaiseTokenFloor(std::string_view key, std::string_view holder, FencingToken floor,
                                       MonoTime deadline) override;
  Status SetValue(std::string_view key, std::string_view value) override;
  Status SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) override;
  Result<std::string> GetValue(std::string_view key) override;
  Status DeleteValue(std::string_view key) override;
  Result<std::vector<KeyValue>> ListValues(std::string_view prefix) override;
  std::string Describe() const override { return "memory://"; }

  // Forgets every lock, token counter and value, as a coordination service that restarted
  // without its data (tests of what survives such a wipe).
  void Wipe();

 private:
  struct Lock {
    std::string holder;   // empty when released
    MonoTime expires_at{};
    FencingToken last_token = 0;  // kept after release and expiry
  };
  struct Value {
    std::string value;
    bool has_expiry = false;
    MonoTime expires_at{};
  };
  // The live holder of `lock` at `now`, "" when free or expired.
  static const std::string& LiveHolder(const Lock& lock, MonoTime now);
  Status SetValueInternal(std::string_view key, std::string_view value, bool has_expiry, Duration ttl);

  Runtime& runtime_;
  Mutex mu_;
  // std::map: ordered, so ListValues needs no sort and nothing depends on hash order.
  std::map<std::string, Lock, std::less<>> locks_ GUARDED_BY(mu_);
  std::map<std::string, Value, std::less<>> values_ GUARDED_BY(mu_);
};

}  // namespace kvchaos::election
