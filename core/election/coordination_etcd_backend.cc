// etcd coordination backend (see the header). Every check-then-write is one etcd transaction that
// compares what was read (a revision, the holder, the lease), so a change in between makes it
// fail instead of overwriting someone else's lock or counter.
#include "core/election/coordination_etcd_backend.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

#include "core/common/base64.h"

namespace kvchaos::election {

namespace {

using etcd_json::KeyRecord;

// Rounds of read-then-transaction before TryLock / RaiseTokenFloor give up on a contended key.
constexpr int kMaxRounds = 16;
// Keys per page of ListValues.
constexpr int kListPage = 500;

Status HeldBy(std::string_view key, std::string_view holder) {
  return Status(StatusCode::kAlreadyExists, "lock '" + std::string(key) + "' is held by '" + std::string(holder) + "'");
}

Status NotHolder(std::string_view key, std::string_view holder, std::string_view why = "") {
  return Status(StatusCode::kLockLost, "lock '" + std::string(key) + "' is not held by '" + std::string(holder) + "'" +
                                           (why.empty() ? "" : " (" + std::string(why) + ")"));
}

Result<FencingToken> ParseCounter(const KeyRecord& r, std::string_view key) {
  FencingToken n = 0;
  auto [end, ec] = std::from_chars(r.value.data(), r.value.data() + r.value.size(), n);
  if (r.value.empty() || ec != std::errc() || end != r.value.data() + r.value.size() || n > kMaxTokenFloor + 1) {
    return Status::Unavailable("fencing counter of lock '" + std::string(key) + "' holds '" + r.value.substr(0, 40) +
                               "', not a token");
  }
  return n;
}

// The one record a range of one key gives, or nullopt.
Result<std::optional<KeyRecord>> OneRecord(const nlohmann::json& range, std::string_view what) {
  auto records = etcd_json::Records(range, what);
  if (!records.ok()) return records.status();
  if (records->empty()) return std::optional<KeyRecord>();
  return std::optional<KeyRecord>(std::move(records->front()));
}

std::string Id(int64_t lease) { return std::to_string(lease); }

}  // namespace

CoordinationEtcdBackend::CoordinationEtcdBackend(Runtime& runtime, EtcdEndpoints endpoints,
                                                 std::unique_ptr<EtcdTransport> transport)
    : runtime_(runtime), prefix_(endpoints.prefix), gateway_(runtime, std::move(endpoints), std::move(transport)) {}

std::string CoordinationEtcdBackend::Describe() const { return gateway_.Describe() + " prefix=" + prefix_; }

std::string CoordinationEtcdBackend::LockKey(std::string_view key) const { return prefix_ + "lock/" + std::string(key); }
std::string CoordinationEtcdBackend::FenceKey(std::string_view key) const {
  return prefix_ + "fence/" + std::string(key);
}
std::string CoordinationEtcdBackend::ValueKey(std::string_view key) const { return prefix_ + "kv/" + std::string(key); }

int64_t CoordinationEtcdBackend::LeaseSeconds(Duration d) {
  constexpr int64_t kNsPerSecond = 1'000'000'000;
  const int64_t ns = d.count();
  return std::max<int64_t>(1, ns / kNsPerSecond + (ns % kNsPerSecond > 0 ? 1 : 0));
}

Status CoordinationEtcdBackend::Init() {
  auto r = gateway_.Call("/v3/kv/range", {{"key", Base64Encode(prefix_)}, {"count_only", true}}, kNoDeadline);
  if (!r.ok()) return r.status().WithContext("coordination " + Describe());
  spdlog::info("coordination: connected to {}", Describe());
  return Status::Ok();
}

Result<nlohmann::json> CoordinationEtcdBackend::Txn(std::vector<nlohmann::json> compare,
                                                     std::vector<nlohmann::json> success, MonoTime deadline) {
  nlohmann::json body = nlohmann::json::object();
  body["compare"] = nlohmann::json::array();
  for (nlohmann::json& c : compare) body["compare"].push_back(std::move(c));
  body["success"] = nlohmann::json::array();
  for (nlohmann::json& op : success) body["success"].push_back(std::move(op));
  return gateway_.Call("/v3/kv/txn", body, deadline);
}

Result<CoordinationEtcdBackend::LockState> CoordinationEtcdBackend::ReadLock(std::string_view key, MonoTime deadline) {
  const std::string what = "lock '" + std::string(key) + "'";
  auto r = Txn({}, {etcd_json::RangeOp(LockKey(key)), etcd_json::RangeOp(FenceKey(key))}, deadline);
  if (!r.ok()) return r.status();
  LockState state;
  auto lock_range = etcd_json::TxnResponse(*r, 0, "response_range", what);
  if (!lock_range.ok()) return lock_range.status();
  auto lock = OneRecord(*lock_range, what);
  if (!lock.ok()) return lock.status();
  state.lock = std::move(*lock);
  auto fence_range = etcd_json::TxnResponse(*r, 1, "response_range", what);
  if (!fence_range.ok()) return fence_range.status();
  auto fence = OneRecord(*fence_range, what);
  if (!fence.ok()) return fence.status();
  if (*fence) {
    auto counter = ParseCounter(**fence, key);
    if (!counter.ok()) return counter.status();
    state.counter = *counter;
    state.counter_mod_revision = (*fence)->mod_revision;
  }
  return state;
}

Result<int64_t> CoordinationEtcdBackend::GrantLease(Duration length, MonoTime deadline, std::string_view what) {
  auto r = gateway_.Call("/v3/lease/grant", {{"TTL", std::to_string(LeaseSeconds(length))}}, deadline);
  if (!r.ok()) return r.status();
  auto id = etcd_json::Int64(*r, "ID", what);
  if (!id.ok()) return id.status();
  if (*id == 0) return Status::Unavailable(std::string(what) + ": etcd granted a lease without an ID");
  return *id;
}

void CoordinationEtcdBackend::RevokeQuietly(int64_t lease, MonoTime deadline) {
  if (lease == 0 || runtime_.Now() >= deadline) return;
  auto r = gateway_.Call("/v3/lease/revoke", {{"ID", Id(lease)}}, deadline);
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
    spdlog::debug("coordination: revoking lease {} failed ({}); it expires by itself", lease, r.status().message());
  }
}

Result<LockGrant> CoordinationEtcdBackend::TryLock(std::string_view key, std::string_view holder, Duration lease,
                                                   MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("lease", lease));
  const std::string what = "TryLock('" + std::string(key) + "')";
  const std::string lock_key = LockKey(key);
  const std::string fence_key = FenceKey(key);
  for (int round = 0; round < kMaxRounds; ++round) {
    auto state = ReadLock(key, deadline);
    if (!state.ok()) return state.status();
    if (state->lock && state->lock->value != holder) return HeldBy(key, state->lock->value);
    if (state->counter > kMaxTokenFloor) {
      return Status::InvalidArgument(what + ": the fencing counter is at " + std::to_string(state->counter) +
                                     ", the largest token");
    }
    auto new_lease = GrantLease(lease, deadline, what);
    if (!new_lease.ok()) return new_lease.status();
    const FencingToken token = state->counter + 1;
    // Free (never created, or deleted: Unlock, expiry), or still ours as read (re-entry).
    std::vector<nlohmann::json> compare;
    if (state->lock) {
      compare.push_back(etcd_json::CompareInt(lock_key, "MOD", state->lock->mod_revision));
      compare.push_back(etcd_json::CompareValue(lock_key, holder));
    } else {
      compare.push_back(etcd_json::CompareInt(lock_key, "CREATE", 0));
    }
    compare.push_back(etcd_json::CompareInt(fence_key, "MOD", state->counter_mod_revision));
    auto r = Txn(compare,
                 {etcd_json::PutOp(lock_key, holder, *new_lease), etcd_json::PutOp(fence_key, std::to_string(token), 0)},
                 deadline);
    if (!r.ok()) {
      // The outcome is unknown; revoking the new lease frees the lock if it was taken after all.
      RevokeQuietly(*new_lease, deadline);
      return r.status();
    }
    if (etcd_json::Succeeded(*r)) {
      if (state->lock && state->lock->lease != *new_lease) RevokeQuietly(state->lock->lease, deadline);
      return LockGrant{token};
    }
    RevokeQuietly(*new_lease, deadline);  // the lock or the counter changed since the read: read again
  }
  return Status::Unavailable(what + ": the lock or its counter changed between read and write " +
                             std::to_string(kMaxRounds) + " times in a row");
}

Status CoordinationEtcdBackend::RenewLock(std::string_view key, std::string_view holder, Duration lease,
                                          MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("lease", lease));
  const std::string what = "RenewLock('" + std::string(key) + "')";
  const std::string lock_key = LockKey(key);
  auto range = gateway_.Call("/v3/kv/range", {{"key", Base64Encode(lock_key)}}, deadline);
  if (!range.ok()) return range.status();
  auto lock = OneRecord(*range, what);
  if (!lock.ok()) return lock.status();
  if (!*lock || (*lock)->value != holder) return NotHolder(key, holder);
  const int64_t old_lease = (*lock)->lease;
  if (old_lease == 0) return NotHolder(key, holder, "the lock key has no lease: it was not written by this backend");
  // The lock is the holder's and on `old_lease`: while that lease lives the key cannot change
  // hands (it is deleted only with the lease or by the holder's Unlock), so keeping it alive is
  // the renewal.
  auto kept = gateway_.Call("/v3/lease/keepalive", {{"ID", Id(old_lease)}}, deadline);
  if (!kept.ok()) return kept.status();
  auto ttl = etcd_json::Int64(*kept, "TTL", what);
  if (!ttl.ok()) return ttl.status();
  if (*ttl <= 0) return NotHolder(key, holder, "its lease expired");
  if (*ttl >= LeaseSeconds(lease)) return Status::Ok();
  // Granted shorter than this renewal asks: move the lock to a lease of the asked length.
  auto longer = GrantLease(lease, deadline, what);
  if (!longer.ok()) return longer.status();
  auto r = Txn({etcd_json::CompareValue(lock_key, holder), etcd_json::CompareInt(lock_key, "LEASE", old_lease)},
               {etcd_json::PutOp(lock_key, holder, *longer)}, deadline);
  if (!r.ok() || !etcd_json::Succeeded(*r)) {
    RevokeQuietly(*longer, deadline);
    return r.ok() ? NotHolder(key, holder) : r.status();
  }
  RevokeQuietly(old_lease, deadline);
  return Status::Ok();
}

Status CoordinationEtcdBackend::Unlock(std::string_view key, std::string_view holder, MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  const std::string what = "Unlock('" + std::string(key) + "')";
  const std::string lock_key = LockKey(key);
  auto r = Txn({etcd_json::CompareValue(lock_key, holder)}, {etcd_json::RangeOp(lock_key), etcd_json::DeleteOp(lock_key)},
               deadline);
  if (!r.ok()) return r.status();
  if (!etcd_json::Succeeded(*r)) return NotHolder(key, holder);
  auto range = etcd_json::TxnResponse(*r, 0, "response_range", what);
  if (!range.ok()) return range.status();
  auto lock = OneRecord(*range, what);
  if (!lock.ok()) return lock.status();
  if (*lock) RevokeQuietly((*lock)->lease, deadline);
  return Status::Ok();
}

Result<LockHolderInfo> CoordinationEtcdBackend::GetLockHolder(std::string_view key, MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  const std::string what = "GetLockHolder('" + std::string(key) + "')";
  auto state = ReadLock(key, deadline);
  if (!state.ok()) return state.status();
  LockHolderInfo info;
  info.token = state->counter;
  if (!state->lock) return info;
  info.holder = state->lock->value;
  if (state->lock->lease != 0) {
    auto ttl = gateway_.Call("/v3/lease/timetolive", {{"ID", Id(state->lock->lease)}}, deadline);
    if (!ttl.ok()) return ttl.status();
    auto seconds = etcd_json::Int64(*ttl, "TTL", what);
    if (!seconds.ok()) return seconds.status();
    // -1: expired, its keys not yet deleted; still held until etcd's leader revokes it.
    info.remaining_ttl = std::chrono::seconds(std::clamp<int64_t>(*seconds, 0, int64_t{1} << 32));
  }
  return info;
}

Result<FencingToken> CoordinationEtcdBackend::RaiseTokenFloor(std::string_view key, std::string_view holder,
                                                              FencingToken floor, MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidateTokenFloor(floor));
  const std::string what = "RaiseTokenFloor('" + std::string(key) + "')";
  const std::string lock_key = LockKey(key);
  const std::string fence_key = FenceKey(key);
  for (int round = 0; round < kMaxRounds; ++round) {
    auto state = ReadLock(key, deadline);
    if (!state.ok()) return state.status();
    if (!state->lock || state->lock->value != holder) return NotHolder(key, holder);
    const FencingToken token = std::max(state->counter, floor) + 1;
    auto r = Txn({etcd_json::CompareValue(lock_key, holder),
                  etcd_json::CompareInt(fence_key, "MOD", state->counter_mod_revision)},
                 {etcd_json::PutOp(fence_key, std::to_string(token), 0)}, deadline);
    if (!r.ok()) return r.status();
    if (etcd_json::Succeeded(*r)) return token;
  }
  return Status::Unavailable(what + ": the lock or its counter changed between read and write " +
                             std::to_string(kMaxRounds) + " times in a row");
}

Status CoordinationEtcdBackend::PutValue(std::string_view key, std::string_view value, int64_t lease,
                                         std::string_view what) {
  nlohmann::json put = {{"key", Base64Encode(ValueKey(key))}, {"value", Base64Encode(value)}, {"prev_kv", true}};
  if (lease != 0) put["lease"] = Id(lease);
  auto r = gateway_.Call("/v3/kv/put", put, kNoDeadline);
  if (!r.ok()) return r.status().WithContext(what);
  if (r->contains("prev_kv")) {
    auto previous = OneRecord({{"kvs", nlohmann::json::array({(*r)["prev_kv"]})}}, what);
    if (!previous.ok()) return previous.status();
    // The value left its old lease (a put moves it); that lease holds nothing now.
    if (*previous && (*previous)->lease != lease) RevokeQuietly((*previous)->lease, kNoDeadline);
  }
  return Status::Ok();
}

Status CoordinationEtcdBackend::SetValue(std::string_view key, std::string_view value) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("key", key));
  return PutValue(key, value, 0, "SetValue('" + std::string(key) + "')");
}

Status CoordinationEtcdBackend::SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("ttl", ttl));
  const std::string what = "SetValueWithTtl('" + std::string(key) + "')";
  auto lease = GrantLease(ttl, kNoDeadline, what);
  if (!lease.ok()) return lease.status().WithContext(what);
  Status s = PutValue(key, value, *lease, what);
  if (!s.ok()) RevokeQuietly(*lease, kNoDeadline);
  return s;
}

Result<std::string> CoordinationEtcdBackend::GetValue(std::string_view key) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("key", key));
  const std::string what = "GetValue('" + std::string(key) + "')";
  auto r = gateway_.Call("/v3/kv/range", {{"key", Base64Encode(ValueKey(key))}}, kNoDeadline);
  if (!r.ok()) return r.status().WithContext(what);
  auto record = OneRecord(*r, what);
  if (!record.ok()) return record.status();
  if (!*record) return Status::NotFound("key '" + std::string(key) + "' has no value");
  return std::move((*record)->value);
}

Status CoordinationEtcdBackend::DeleteValue(std::string_view key) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("key", key));
  const std::string what = "DeleteValue('" + std::string(key) + "')";
  auto r = gateway_.Call("/v3/kv/deleterange", {{"key", Base64Encode(ValueKey(key))}, {"prev_kv", true}}, kNoDeadline);
  if (!r.ok()) return r.status().WithContext(what);
  if (r->contains("prev_kvs")) {
    auto previous = etcd_json::Records({{"kvs", (*r)["prev_kvs"]}}, what);
    if (!previous.ok()) return previous.status();
    for (const KeyRecord& p : *previous) RevokeQuietly(p.lease, kNoDeadline);
  }
  return Status::Ok();
}

Result<std::vector<KeyValue>> CoordinationEtcdBackend::ListValues(std::string_view prefix) {
  const std::string what = "ListValues('" + std::string(prefix) + "')";
  const std::string strip = ValueKey("");
  const std::string start = ValueKey(prefix);
  const std::string end = etcd_json::PrefixEnd(start);
  std::vector<KeyValue> out;
  std::string from = start;
  // etcd lists in key order (bytewise, as std::string compares); pages continue after the last key.
  for (int page = 0; page < 100000; ++page) {
    const nlohmann::json request = {{"key", Base64Encode(from)},   {"range_end", Base64Encode(end)},
                                    {"limit", kListPage},          {"sort_order", "ASCEND"},
                                    {"sort_target", "KEY"}};
    auto r = gateway_.Call("/v3/kv/range", request, kNoDeadline);
    if (!r.ok()) return r.status().WithContext(what);
    auto records = etcd_json::Records(*r, what);
    if (!records.ok()) return records.status();
    for (KeyRecord& record : *records) {
      if (record.key.compare(0, strip.size(), strip) != 0) continue;  // never: the range is under it
      out.push_back({record.key.substr(strip.size()), std::move(record.value)});
    }
    const bool more = r->contains("more") && (*r)["more"].is_boolean() && (*r)["more"].get<bool>();
    if (!more || records->empty()) break;
    from = records->back().key + std::string(1, '\0');
  }
  return out;
}

}  // namespace kvchaos::election
