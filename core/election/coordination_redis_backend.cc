// Redis coordination backend (see the header). Lua scripts make each lock operation atomic on the
// server; the holder compare in Renew/Unlock is what keeps a node from extending or deleting a lock
// that expired and went to someone else.
#include "core/election/coordination_redis_backend.h"

#include "core/common/redis_reply_bound.h"
#include "core/election/redis_replies.h"

#include <hiredis/hiredis.h>
#include <spdlog/spdlog.h>
#include <sys/time.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>

namespace kvchaos::election {

namespace {

using redis_replies::Text;

// KEYS[1] lock, KEYS[2] fence counter; ARGV[1] holder, ARGV[2] lease ms.
// Free, expired or ours (re-entry): take it for a full lease and grant the next token. The token
// goes back as the counter's string: INCR's integer would pass through a Lua double and round
// above 2^53.
constexpr const char* kTryLockLua = R"lua(
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then
  return {0, cur}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('INCR', KEYS[2])
return {1, redis.call('GET', KEYS[2])}
)lua";

constexpr const char* kRenewLua = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
)lua";

constexpr const char* kUnlockLua = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
)lua";

// KEYS[1] lock, KEYS[2] fence counter -> {holder or '', pttl, token or '0'}.
constexpr const char* kHolderLua = R"lua(
local h = redis.call('GET', KEYS[1])
local t = redis.call('PTTL', KEYS[1])
local f = redis.call('GET', KEYS[2])
return {h or '', t, f or '0'}
)lua";

// KEYS[1] lock, KEYS[2] fence counter; ARGV[1] holder, ARGV[2] floor (decimal, < 2^63 - 1).
// Only the holder may raise: counter = max(counter, floor) + 1 -> {1, token}; {0} otherwise.
// The floor is compared as a decimal string (Lua numbers are doubles: exact only below 2^53).
constexpr const char* kRaiseFloorLua = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {0}
end
local cur = redis.call('GET', KEYS[2]) or '0'
local floor = ARGV[2]
if #cur < #floor or (#cur == #floor and cur < floor) then
  redis.call('SET', KEYS[2], floor)
end
redis.call('INCR', KEYS[2])
return {1, redis.call('GET', KEYS[2])}
)lua";

// Server error replies after which a retry on a fresh connection may succeed.
bool TransientServerError(std::string_view err) {
  for (std::string_view p : {"LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "READONLY", "CLUSTERDOWN"}) {
    if (err.substr(0, p.size()) == p) return true;
  }
  return false;
}

std::string GlobEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

timeval ToTimeval(int64_t ms) {
  timeval tv{};
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

Status CheckPositive(std::string_view what, Duration d) {
  if (d <= Duration::zero()) {
    return Status::InvalidArgument(std::string(what) + " must be > 0, got " + std::to_string(ToMillis(d)) + " ms");
  }
  return Status::Ok();
}

// PX argument: whole milliseconds, at least 1 (a sub-millisecond lease would be 0 = invalid).
std::string PxArg(Duration d) { return std::to_string(std::max<int64_t>(1, ToMillis(d))); }

}  // namespace

const char* CoordinationRedisBackend::ScriptName(ScriptId id) {
  static constexpr const char* kNames[] = {"trylock", "renew", "unlock", "holder", "raisefloor"};
  return kNames[id];
}

void CoordinationRedisBackend::ReplyDeleter::operator()(redisReply* r) const { freeReplyObject(r); }

CoordinationRedisBackend::CoordinationRedisBackend(Runtime& runtime, RedisEndpoint endpoint)
    : runtime_(runtime), endpoint_(std::move(endpoint)), mu_(runtime) {
  MutexLock lock(mu_);
  scripts_[kTryLock] = {"trylock", kTryLockLua, ""};
  scripts_[kRenew] = {"renew", kRenewLua, ""};
  scripts_[kUnlock] = {"unlock", kUnlockLua, ""};
  scripts_[kHolder] = {"holder", kHolderLua, ""};
  scripts_[kRaiseFloor] = {"raisefloor", kRaiseFloorLua, ""};
}

CoordinationRedisBackend::~CoordinationRedisBackend() {
  MutexLock lock(mu_);
  DisconnectLocked();
}

std::string CoordinationRedisBackend::Describe() const {
  std::string s = "redis://" + endpoint_.host + ":" + std::to_string(endpoint_.port) + " db=" +
                  std::to_string(endpoint_.db);
  if (!endpoint_.cluster_name.empty()) s += " cluster=" + endpoint_.cluster_name;
  return s;
}

std::string CoordinationRedisBackend::Prefix(std::string_view kind) const {
  if (endpoint_.cluster_name.empty()) return "kvcm_" + std::string(kind) + ":";
  return "kvcm_" + endpoint_.cluster_name + "_" + std::string(kind) + ":";
}
std::string CoordinationRedisBackend::LockKey(std::string_view key) const { return Prefix("lock") + std::string(key); }
std::string CoordinationRedisBackend::FenceKey(std::string_view key) const { return Prefix("fence") + std::string(key); }
std::string CoordinationRedisBackend::ValueKey(std::string_view key) const { return Prefix("kv") + std::string(key); }

void CoordinationRedisBackend::DisconnectLocked() {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

Status CoordinationRedisBackend::ConnectLocked() {
  if (ctx_ != nullptr) return Status::Ok();
  const std::string where = "redis " + endpoint_.host + ":" + std::to_string(endpoint_.port);
  redisContext* c = redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, ToTimeval(endpoint_.timeout_ms));
  if (c == nullptr) return Status::Unavailable(where + ": cannot allocate a connection");
  if (c->err != 0) {
    Status s = Status::Unavailable(where + ": connect failed: " + c->errstr);
    redisFree(c);
    return s;
  }
  if (redisSetTimeout(c, ToTimeval(endpoint_.timeout_ms)) != REDIS_OK) {
    redisFree(c);
    return Status::Unavailable(where + ": cannot set the command timeout");
  }
  redisEnableKeepAlive(c);
  BoundRedisReplies(c->reader);
  ctx_ = c;
  auto simple = [&](const std::vector<std::string>& argv, std::string_view what) REQUIRES(mu_) -> Status {
    bool failed = false;
    auto r = CommandOnce(argv, &failed);
    if (!r.ok()) return r.status();
    if ((*r)->type == REDIS_REPLY_ERROR) {
      return Status::Unavailable(where + ": " + std::string(what) + " refused: " + Text(r->get()));
    }
    return Status::Ok();
  };
  Status s;
  if (!endpoint_.password.empty() || !endpoint_.user.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!endpoint_.user.empty()) auth.push_back(endpoint_.user);
    auth.push_back(endpoint_.password);
    s = simple(auth, "AUTH");
  }
  if (s.ok() && endpoint_.db > 0) {
    s = simple({"SELECT", std::to_string(endpoint_.db)}, "SELECT " + std::to_string(endpoint_.db) +
                                                             " (db > 0 is not available on Redis Cluster)");
  }
  for (Script& s_ref : scripts_) {
    Script* script = &s_ref;
    if (!s.ok()) break;
    bool failed = false;
    auto r = CommandOnce({"SCRIPT", "LOAD", script->body}, &failed);
    if (!r.ok()) {
      s = r.status();
    } else if ((*r)->type != REDIS_REPLY_STRING) {
      s = Status::Unavailable(where + ": SCRIPT LOAD " + script->name + " failed: " + Text(r->get()));
    } else {
      script->sha = Text(r->get());
    }
  }
  if (!s.ok()) {
    DisconnectLocked();
    return s;
  }
  spdlog::info("coordination: connected to {}", Describe());
  return Status::Ok();
}

Result<CoordinationRedisBackend::Reply> CoordinationRedisBackend::CommandOnce(const std::vector<std::string>& argv,
                                                                              bool* connection_failed) {
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* raw = static_cast<redisReply*>(redisCommandArgv(ctx_, static_cast<int>(args.size()), args.data(), lens.data()));
  if (raw == nullptr) {
    *connection_failed = true;
    const std::string err = ctx_->errstr;
    const bool timed_out = ctx_->err == REDIS_ERR_IO && (err.find("temporarily unavailable") != std::string::npos ||
                                                         err.find("timed out") != std::string::npos);
    DisconnectLocked();  // the connection's state is unknown now: never reuse it
    const std::string msg = "redis " + endpoint_.host + ":" + std::to_string(endpoint_.port) + ": " + argv[0] + ": " +
                            (timed_out ? "no answer within " + std::to_string(endpoint_.timeout_ms) + " ms" : err);
    return timed_out ? Status::Timeout(msg) : Status::Unavailable(msg);
  }
  Reply reply(raw);
  if (reply->type == REDIS_REPLY_ERROR && TransientServerError(Text(reply.get()))) {
    *connection_failed = true;
    DisconnectLocked();
    return Status::Unavailable("redis " + endpoint_.host + ":" + std::to_string(endpoint_.port) + ": " +
                               Text(reply.get()));
  }
  return reply;
}

Result<CoordinationRedisBackend::Reply> CoordinationRedisBackend::Command(const std::vector<std::string>& argv,
                                                                          std::string_view what) {
  Status last;
  for (int attempt = 0; attempt <= endpoint_.retry_count; ++attempt) {
    if (attempt > 0) runtime_.SleepFor(Millis(std::min<int64_t>(20 << (attempt - 1), 500)));
    bool failed = false;
    {
      MutexLock lock(mu_);
      Status c = ConnectLocked();
      if (c.ok()) {
        auto r = CommandOnce(argv, &failed);
        if (!failed) return r;
        last = r.status();
      } else {
        last = c;
      }
    }
  }
  return last.WithContext(std::string(what) + " failed after " + std::to_string(endpoint_.retry_count + 1) +
                          " attempt(s)");
}

Result<CoordinationRedisBackend::Reply> CoordinationRedisBackend::Eval(ScriptId id,
                                                                       const std::vector<std::string>& keys,
                                                                       const std::vector<std::string>& args) {
  Status last;
  for (int attempt = 0; attempt <= endpoint_.retry_count; ++attempt) {
    if (attempt > 0) runtime_.SleepFor(Millis(std::min<int64_t>(20 << (attempt - 1), 500)));
    MutexLock lock(mu_);
    Status c = ConnectLocked();
    if (!c.ok()) {
      last = c;
      continue;
    }
    Script& script = scripts_[id];
    // EVALSHA; on NOSCRIPT (SCRIPT FLUSH, failover to a fresh replica) load it and run it again.
    for (int load = 0; load < 2; ++load) {
      std::vector<std::string> argv = {"EVALSHA", script.sha, std::to_string(keys.size())};
      argv.insert(argv.end(), keys.begin(), keys.end());
      argv.insert(argv.end(), args.begin(), args.end());
      bool failed = false;
      auto r = CommandOnce(argv, &failed);
      if (failed) {
        last = r.status();
        break;
      }
      if ((*r)->type == REDIS_REPLY_ERROR && Text(r->get()).rfind("NOSCRIPT", 0) == 0 && load == 0) {
        spdlog::info("coordination: script '{}' missing on {} (NOSCRIPT); reloading", script.name, Describe());
        auto loaded = CommandOnce({"SCRIPT", "LOAD", script.body}, &failed);
        if (failed) {
          last = loaded.status();
          break;
        }
        if ((*loaded)->type != REDIS_REPLY_STRING) {
          return Status::Unavailable("redis: SCRIPT LOAD " + std::string(script.name) +
                                     " failed: " + Text(loaded->get()));
        }
        script.sha = Text(loaded->get());
        continue;
      }
      return r;
    }
  }
  return last.WithContext(std::string("script ") + ScriptName(id) + " failed after " +
                          std::to_string(endpoint_.retry_count + 1) + " attempt(s)");
}

Status CoordinationRedisBackend::Init() {
  MutexLock lock(mu_);
  return ConnectLocked();
}

Result<LockGrant> CoordinationRedisBackend::TryLock(std::string_view key, std::string_view holder, Duration lease) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(CheckPositive("lease", lease));
  auto r = Eval(kTryLock, {LockKey(key), FenceKey(key)}, {std::string(holder), PxArg(lease)});
  if (!r.ok()) return r.status();
  return redis_replies::TryLock(r->get(), key);
}

Status CoordinationRedisBackend::RenewLock(std::string_view key, std::string_view holder, Duration lease) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(CheckPositive("lease", lease));
  auto r = Eval(kRenew, {LockKey(key)}, {std::string(holder), PxArg(lease)});
  if (!r.ok()) return r.status();
  return redis_replies::HolderOnly(r->get(), "RenewLock", key, holder);
}

Status CoordinationRedisBackend::Unlock(std::string_view key, std::string_view holder) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  auto r = Eval(kUnlock, {LockKey(key)}, {std::string(holder)});
  if (!r.ok()) return r.status();
  return redis_replies::HolderOnly(r->get(), "Unlock", key, holder);
}

Result<LockHolderInfo> CoordinationRedisBackend::GetLockHolder(std::string_view key) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  auto r = Eval(kHolder, {LockKey(key), FenceKey(key)}, {});
  if (!r.ok()) return r.status();
  return redis_replies::Holder(r->get(), key);
}

Result<FencingToken> CoordinationRedisBackend::RaiseTokenFloor(std::string_view key, std::string_view holder,
                                                               FencingToken floor) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidateTokenFloor(floor));
  auto r = Eval(kRaiseFloor, {LockKey(key), FenceKey(key)}, {std::string(holder), std::to_string(floor)});
  if (!r.ok()) return r.status();
  return redis_replies::RaisedFloor(r->get(), key, holder, floor);
}

Status CoordinationRedisBackend::SetValue(std::string_view key, std::string_view value) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("key", key));
  auto r = Command({"SET", ValueKey(key), std::string(value)}, "SET");
  if (!r.ok()) return r.status();
  return redis_replies::Done(r->get(), "SetValue('" + std::string(key) + "')");
}

Status CoordinationRedisBackend::SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("key", key));
  KVCHAOS_RETURN_IF_ERROR(CheckPositive("ttl", ttl));
  auto r = Command({"SET", ValueKey(key), std::string(value), "PX", PxArg(ttl)}, "SET PX");
  if (!r.ok()) return r.status();
  return redis_replies::Done(r->get(), "SetValueWithTtl('" + std::string(key) + "')");
}

Result<std::string> CoordinationRedisBackend::GetValue(std::string_view key) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("key", key));
  auto r = Command({"GET", ValueKey(key)}, "GET");
  if (!r.ok()) return r.status();
  return redis_replies::Value(r->get(), key);
}

Status CoordinationRedisBackend::DeleteValue(std::string_view key) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("key", key));
  auto r = Command({"DEL", ValueKey(key)}, "DEL");
  if (!r.ok()) return r.status();
  return redis_replies::Done(r->get(), "DeleteValue('" + std::string(key) + "')");
}

Result<std::vector<KeyValue>> CoordinationRedisBackend::ListValues(std::string_view prefix) {
  const std::string full_prefix = ValueKey(prefix);
  const std::string pattern = GlobEscape(full_prefix) + "*";
  std::set<std::string> keys;  // SCAN may return a key twice; a set also sorts
  std::string cursor = "0";
  // Bounded: SCAN finishes in a number of calls proportional to the keyspace; cap it anyway.
  for (int round = 0; round < 100000; ++round) {
    auto r = Command({"SCAN", cursor, "MATCH", pattern, "COUNT", "500"}, "SCAN");
    if (!r.ok()) return r.status();
    Result<std::string> next = redis_replies::ScanPage(r->get(), &keys);
    if (!next.ok()) return next.status();
    cursor = *next;
    if (cursor == "0") break;
  }
  std::vector<KeyValue> out;
  std::vector<std::string> chunk;
  auto flush = [&]() -> Status {
    if (chunk.empty()) return Status::Ok();
    std::vector<std::string> argv = {"MGET"};
    argv.insert(argv.end(), chunk.begin(), chunk.end());
    auto r = Command(argv, "MGET");
    if (!r.ok()) return r.status();
    KVCHAOS_RETURN_IF_ERROR(redis_replies::MgetValues(r->get(), chunk, Prefix("kv").size(), &out));
    chunk.clear();
    return Status::Ok();
  };
  for (const auto& k : keys) {
    chunk.push_back(k);
    if (chunk.size() == 200) KVCHAOS_RETURN_IF_ERROR(flush());
  }
  KVCHAOS_RETURN_IF_ERROR(flush());
  return out;
}

}  // namespace kvchaos::election
