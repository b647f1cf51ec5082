// In-memory coordination backend (see the header).
#include "core/election/coordination_memory_backend.h"

#include <algorithm>

namespace kvchaos::election {

namespace {

const std::string kNobody;

}  // namespace

CoordinationMemoryBackend::CoordinationMemoryBackend(Runtime& runtime) : runtime_(runtime), mu_(runtime) {}

const std::string& CoordinationMemoryBackend::LiveHolder(const Lock& lock, MonoTime now) {
  if (lock.holder.empty() || now >= lock.expires_at) return kNobody;
  return lock.holder;
}

Result<LockGrant> CoordinationMemoryBackend::TryLock(std::string_view key, std::string_view holder, Duration lease,
                                                     MonoTime /*deadline*/) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("lease", lease));
  MutexLock lock(mu_);
  const MonoTime now = runtime_.Now();
  auto it = locks_.try_emplace(std::string(key)).first;
  const std::string& live = LiveHolder(it->second, now);
  if (!live.empty() && live != holder) {
    return Status(StatusCode::kAlreadyExists, "lock '" + std::string(key) + "' is held by '" + live + "'");
  }
  it->second.holder = std::string(holder);
  it->second.expires_at = now + lease;
  it->second.last_token += 1;
  return LockGrant{it->second.last_token};
}

Status CoordinationMemoryBackend::RenewLock(std::string_view key, std::string_view holder, Duration lease,
                                            MonoTime /*deadline*/) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("lease", lease));
  MutexLock lock(mu_);
  const MonoTime now = runtime_.Now();
  auto it = locks_.find(key);
  if (it == locks_.end() || LiveHolder(it->second, now) != holder) {
    return Status(StatusCode::kLockLost, "lock '" + std::string(key) + "' is not held by '" + std::string(holder) + "'");
  }
  it->second.expires_at = now + lease;
  return Status::Ok();
}

Status CoordinationMemoryBackend::Unlock(std::string_view key, std::string_view holder, MonoTime /*deadline*/) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  MutexLock lock(mu_);
  auto it = locks_.find(key);
  if (it == locks_.end() || LiveHolder(it->second, runtime_.Now()) != holder) {
    return Status(StatusCode::kLockLost, "lock '" + std::string(key) + "' is not held by '" + std::string(holder) + "'");
  }
  it->second.holder.clear();
  return Status::Ok();
}

Result<LockHolderInfo> CoordinationMemoryBackend::GetLockHolder(std::string_view key, MonoTime /*deadline*/) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  MutexLock lock(mu_);
  LockHolderInfo info;
  auto it = locks_.find(key);
  if (it == locks_.end()) return info;
  const MonoTime now = runtime_.Now();
  info.holder = LiveHolder(it->second, now);
  info.token = it->second.last_token;
  if (!info.holder.empty()) info.remaining_ttl = it->second.expires_at - now;
  return info;
}

Result<FencingToken> CoordinationMemoryBackend::RaiseTokenFloor(std::string_view key, std::string_view holder,
                                                                FencingToken floor, MonoTime /*deadline*/) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidateTokenFloor(floor));
  MutexLock lock(mu_);
  auto it = locks_.find(key);
  if (it == locks_.end() || LiveHolder(it->second, runtime_.Now()) != holder) {
    return Status(StatusCode::kLockLost, "lock '" + std::string(key) + "' is not held by '" + std::string(holder) + "'");
  }
  it->second.last_token = std::max(it->second.last_token, floor) + 1;
  return it->second.last_token;
}

void CoordinationMemoryBackend::Wipe() {
  MutexLock lock(mu_);
  locks_.clear();
  values_.clear();
}

Status CoordinationMemoryBackend::SetValueInternal(std::string_view key, std::string_view value, bool has_expiry,
                                                   Duration ttl) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("key", key));
  if (has_expiry) KVCHAOS_RETURN_IF_ERROR(ValidatePositive("ttl", ttl));
  MutexLock lock(mu_);
  Value& v = values_[std::string(key)];
  v.value = std::string(value);
  v.has_expiry = has_expiry;
  v.expires_at = has_expiry ? runtime_.Now() + ttl : MonoTime{};
  return Status::Ok();
}

Status CoordinationMemoryBackend::SetValue(std::string_view key, std::string_view value) {
  return SetValueInternal(key, value, false, Duration::zero());
}

Status CoordinationMemoryBackend::SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) {
  return SetValueInternal(key, value, true, ttl);
}

Result<std::string> CoordinationMemoryBackend::GetValue(std::string_view key) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("key", key));
  MutexLock lock(mu_);
  auto it = values_.find(key);
  if (it == values_.end() || (it->second.has_expiry && runtime_.Now() >= it->second.expires_at)) {
    return Status::NotFound("key '" + std::string(key) + "' has no value");
  }
  return it->second.value;
}

Status CoordinationMemoryBackend::DeleteValue(std::string_view key) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("key", key));
  MutexLock lock(mu_);
  auto it = values_.find(key);
  if (it != values_.end()) values_.erase(it);
  return Status::Ok();
}

Result<std::vector<KeyValue>> CoordinationMemoryBackend::ListValues(std::string_view prefix) {
  MutexLock lock(mu_);
  const MonoTime now = runtime_.Now();
  std::vector<KeyValue> out;
  for (auto it = values_.lower_bound(prefix); it != values_.end();) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    if (it->second.has_expiry && now >= it->second.expires_at) {
      it = values_.erase(it);  // heartbeats of departed nodes must not pile up in memory
      continue;
    }
    out.push_back({it->first, it->second.value});
    ++it;
  }
  return out;
}

}  // namespace kvchaos::election
