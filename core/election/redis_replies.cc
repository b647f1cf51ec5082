// Shape checks of the Redis coordination backend's replies (see redis_replies.h).
#include "core/election/redis_replies.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "core/common/units.h"

namespace kvchaos::election::redis_replies {
namespace {

bool IsArray(const redisReply* r, size_t elements) {
  return r != nullptr && r->type == REDIS_REPLY_ARRAY && r->elements == elements && r->element != nullptr;
}

const redisReply* At(const redisReply* r, size_t i) {
  return r != nullptr && r->type == REDIS_REPLY_ARRAY && i < r->elements && r->element != nullptr ? r->element[i]
                                                                                                 : nullptr;
}

bool IsInteger(const redisReply* r) { return r != nullptr && r->type == REDIS_REPLY_INTEGER; }

Status NotHolder(std::string_view key, std::string_view holder) {
  return Status(StatusCode::kLockLost, "lock '" + std::string(key) + "' is not held by '" + std::string(holder) + "'");
}

}  // namespace

std::string Text(const redisReply* r) {
  if (r == nullptr) return "";
  if ((r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR) &&
      r->str != nullptr) {
    return std::string(r->str, r->len);
  }
  if (r->type == REDIS_REPLY_INTEGER) return std::to_string(r->integer);
  return "";
}

FencingToken Token(const redisReply* r) {
  if (r == nullptr) return 0;
  if (r->type == REDIS_REPLY_INTEGER) return r->integer > 0 ? static_cast<FencingToken>(r->integer) : 0;
  if (r->type != REDIS_REPLY_STRING || r->str == nullptr) return 0;
  FencingToken t = 0;
  const auto [end, ec] = std::from_chars(r->str, r->str + r->len, t);
  return ec == std::errc() && end == r->str + r->len ? t : 0;
}

Status Unexpected(std::string_view what, const redisReply* r) {
  return Status::Unavailable(std::string(what) + ": redis answered: " + Text(r));
}

Result<LockGrant> TryLock(const redisReply* r, std::string_view key) {
  const std::string what = "TryLock('" + std::string(key) + "')";
  if (!IsArray(r, 2) || !IsInteger(At(r, 0))) return Unexpected(what, r);
  if (At(r, 0)->integer == 0) {
    return Status(StatusCode::kAlreadyExists, "lock '" + std::string(key) + "' is held by '" + Text(At(r, 1)) + "'");
  }
  const FencingToken token = Token(At(r, 1));
  if (token == 0) return Unexpected(what + " token", At(r, 1));
  return LockGrant{token};
}

Status HolderOnly(const redisReply* r, std::string_view what, std::string_view key, std::string_view holder) {
  if (!IsInteger(r)) return Unexpected(std::string(what) + "('" + std::string(key) + "')", r);
  if (r->integer != 1) return NotHolder(key, holder);
  return Status::Ok();
}

Result<LockHolderInfo> Holder(const redisReply* r, std::string_view key) {
  if (!IsArray(r, 3) || !IsInteger(At(r, 1))) return Unexpected("GetLockHolder('" + std::string(key) + "')", r);
  LockHolderInfo info;
  info.holder = Text(At(r, 0));
  const long long pttl = At(r, 1)->integer;
  // A PTTL past what a Duration holds (a broken server) would overflow: clamp it.
  if (!info.holder.empty()) {
    info.remaining_ttl = pttl > 0 ? Millis(std::min<long long>(pttl, ToMillis(kMaxDuration))) : Duration::zero();
  }
  const std::string token = Text(At(r, 2));
  info.token = std::strtoull(token.c_str(), nullptr, 10);
  return info;
}

Result<FencingToken> RaisedFloor(const redisReply* r, std::string_view key, std::string_view holder,
                                 FencingToken floor) {
  const std::string what = "RaiseTokenFloor('" + std::string(key) + "')";
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements < 1 || !IsInteger(At(r, 0))) {
    return Unexpected(what, r);
  }
  if (At(r, 0)->integer == 0) return NotHolder(key, holder);
  const FencingToken token = r->elements == 2 ? Token(At(r, 1)) : 0;
  if (token <= floor) return Unexpected(what + " token", r->elements == 2 ? At(r, 1) : r);
  return token;
}

Status Done(const redisReply* r, std::string_view what) {
  if (r == nullptr || r->type == REDIS_REPLY_ERROR) return Unexpected(what, r);
  return Status::Ok();
}

Result<std::string> Value(const redisReply* r, std::string_view key) {
  if (r != nullptr && r->type == REDIS_REPLY_NIL) return Status::NotFound("key '" + std::string(key) + "' has no value");
  if (r == nullptr || r->type != REDIS_REPLY_STRING) return Unexpected("GetValue('" + std::string(key) + "')", r);
  return Text(r);
}

Result<std::string> ScanPage(const redisReply* r, std::set<std::string>* keys) {
  const redisReply* batch = At(r, 1);
  if (!IsArray(r, 2) || batch == nullptr || batch->type != REDIS_REPLY_ARRAY) return Unexpected("ListValues SCAN", r);
  for (size_t i = 0; i < batch->elements; ++i) keys->insert(Text(At(batch, i)));
  return Text(At(r, 0));
}

Status MgetValues(const redisReply* r, const std::vector<std::string>& keys, size_t strip,
                  std::vector<KeyValue>* out) {
  if (!IsArray(r, keys.size())) return Unexpected("ListValues MGET", r);
  for (size_t i = 0; i < keys.size(); ++i) {
    const redisReply* v = At(r, i);
    if (v == nullptr || v->type != REDIS_REPLY_STRING) continue;  // expired since SCAN
    out->push_back({keys[i].size() >= strip ? keys[i].substr(strip) : keys[i], Text(v)});
  }
  return Status::Ok();
}

Result<PrimaryAddress> MasterAddress(const redisReply* r, std::string_view master) {
  const std::string what = "SENTINEL get-master-addr-by-name " + std::string(master);
  if (r != nullptr && r->type == REDIS_REPLY_NIL) {
    return Status::NotFound("no master named '" + std::string(master) + "' is monitored");
  }
  const auto is_string = [](const redisReply* e) { return e != nullptr && e->type == REDIS_REPLY_STRING; };
  if (!IsArray(r, 2) || !is_string(At(r, 0)) || !is_string(At(r, 1))) {
    return Unexpected(what, r);
  }
  PrimaryAddress out;
  out.host = Text(At(r, 0));
  const std::string port = Text(At(r, 1));
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
  if (out.host.empty() || ec != std::errc() || p != port.data() + port.size() || out.port < 1 || out.port > 65535) {
    return Unexpected(what, r);
  }
  return out;
}

std::string RoleName(const redisReply* r) {
  const redisReply* first = At(r, 0);
  if (first == nullptr || first->type != REDIS_REPLY_STRING) {
    return "?";
  }
  return Text(first);
}

bool RoleIsPrimary(const redisReply* r) { return RoleName(r) == "master"; }

}  // namespace kvchaos::election::redis_replies
