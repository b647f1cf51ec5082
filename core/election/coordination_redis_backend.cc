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

// KEYS[1] lock, KEYS[2] fence counter, KEYS[3] fence holder; ARGV[1] holder, ARGV[2] lease ms.
// Free, expired or ours (re-entry): take it for a full lease and grant the next token, noting who
// took it. The token goes back as the counter's string: INCR's integer would pass through a Lua
// double and round above 2^53.
constexpr const char* kTryLockLua = R"lua(
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then
  return {0, cur}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[3], ARGV[1])
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

// KEYS[1] lock, KEYS[2] fence counter, KEYS[3] fence holder -> {holder or '', pttl, token or '0'}.
// A holder that did not take the newest token (an upstream node: a plain SET NX PX) has none.
constexpr const char* kHolderLua = R"lua(
local h = redis.call('GET', KEYS[1])
local t = redis.call('PTTL', KEYS[1])
local f = redis.call('GET', KEYS[2])
if h and redis.call('GET', KEYS[3]) ~= h then
  f = '0'
end
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

// At least 1 us: a zero timeval would mean "no timeout" to hiredis.
timeval ToTimeval(Duration d) {
  const int64_t us = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  timeval tv{};
  tv.tv_sec = us / 1'000'000;
  tv.tv_usec = us % 1'000'000;
  return tv;
}

// "1000" or "12.5": milliseconds as a message shows them.
std::string FormatMillis(Duration d) {
  const int64_t tenths = std::chrono::duration_cast<std::chrono::microseconds>(d).count() / 100;
  return std::to_string(tenths / 10) + (tenths % 10 != 0 ? "." + std::to_string(tenths % 10) : "");
}

// PX argument: whole milliseconds, at least 1 (a sub-millisecond lease would be 0 = invalid).
std::string PxArg(Duration d) { return std::to_string(std::max<int64_t>(1, ToMillis(d))); }

}  // namespace

const CoordinationRedisBackend::Script CoordinationRedisBackend::kScripts[kScriptCount] = {
    {"trylock", kTryLockLua}, {"renew", kRenewLua}, {"unlock", kUnlockLua},
    {"holder", kHolderLua},   {"raisefloor", kRaiseFloorLua}};

const char* CoordinationRedisBackend::ScriptName(ScriptId id) { return kScripts[id].name; }

void CoordinationRedisBackend::ReplyDeleter::operator()(redisReply* r) const { freeReplyObject(r); }

class CoordinationRedisBackend::Connection {
 public:
  Connection(redisContext* ctx, std::string server) : ctx_(ctx), server_(std::move(server)) {}
  ~Connection() { redisFree(ctx_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  redisContext* ctx() { return ctx_; }
  const std::string& server() const { return server_; }  // "host:port"
  // Sets the command timeout when it differs from the one set last.
  bool Arm(Duration timeout) {
    if (timeout == armed_) return true;
    if (redisSetTimeout(ctx_, ToTimeval(timeout)) != REDIS_OK) return false;
    armed_ = timeout;
    return true;
  }

 private:
  redisContext* ctx_;
  const std::string server_;
  Duration armed_{0};
};

namespace {

std::string HostPort(const std::string& host, int port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

CoordinationRedisBackend::CoordinationRedisBackend(Runtime& runtime, RedisEndpoint endpoint)
    : runtime_(runtime),
      endpoint_(std::move(endpoint)),
      resolver_(endpoint_.sentinels.empty()
                    ? nullptr
                    : std::make_unique<SentinelResolver>(runtime, endpoint_.sentinels, endpoint_.master_name,
                                                         endpoint_.timeout_ms)),
      mu_(runtime) {
  MutexLock lock(mu_);
  if (resolver_ == nullptr) {
    server_host_ = endpoint_.host;
    server_port_ = endpoint_.port;
  }
}

CoordinationRedisBackend::~CoordinationRedisBackend() = default;

std::string CoordinationRedisBackend::Describe() const {
  std::string s;
  if (resolver_ != nullptr) {
    const std::string primary = CurrentServer();
    s = "redis+sentinel://" + resolver_->Describe() + " primary=" + (primary.empty() ? "(not known yet)" : primary);
  } else {
    s = "redis://" + HostPort(endpoint_.host, endpoint_.port);
  }
  s += " db=" + std::to_string(endpoint_.db);
  if (!endpoint_.cluster_name.empty()) s += " cluster=" + endpoint_.cluster_name;
  return s;
}

std::string CoordinationRedisBackend::Prefix(std::string_view kind) const {
  if (endpoint_.cluster_name.empty()) return "kvcm_" + std::string(kind) + ":";
  return "kvcm_" + endpoint_.cluster_name + "_" + std::string(kind) + ":";
}
std::string CoordinationRedisBackend::LockKey(std::string_view key) const { return Prefix("lock") + std::string(key); }
std::string CoordinationRedisBackend::FenceKey(std::string_view key) const { return Prefix("fence") + std::string(key); }
std::string CoordinationRedisBackend::FenceHolderKey(std::string_view key) const {
  return Prefix("fence_holder") + std::string(key);
}
std::string CoordinationRedisBackend::ValueKey(std::string_view key) const { return Prefix("kv") + std::string(key); }

Duration CoordinationRedisBackend::AttemptTimeout(MonoTime deadline) {
  return std::min<Duration>(Millis(endpoint_.timeout_ms), deadline - runtime_.Now());
}


std::string CoordinationRedisBackend::CurrentServer() const {
  MutexLock lock(mu_);
  return server_host_.empty() ? "" : HostPort(server_host_, server_port_);
}

void CoordinationRedisBackend::ForgetPrimary() {
  if (resolver_ == nullptr) return;
  MutexLock lock(mu_);
  server_host_.clear();
  server_port_ = 0;
}

Result<redis_replies::PrimaryAddress> CoordinationRedisBackend::Server(MonoTime deadline) {
  {
    MutexLock lock(mu_);
    if (!server_host_.empty()) return redis_replies::PrimaryAddress{server_host_, server_port_};
  }
  // Asked outside the lock (never wait on the network holding it); two callers may both ask.
  auto primary = resolver_->Resolve(deadline);
  if (!primary.ok()) return primary.status();
  std::string before;
  std::vector<std::unique_ptr<Connection>> dropped;
  {
    MutexLock lock(mu_);
    before = last_primary_;
    server_host_ = primary->host;
    server_port_ = primary->port;
    last_primary_ = HostPort(primary->host, primary->port);
    if (before != last_primary_) dropped.swap(idle_);  // connections to the old primary
  }
  if (before != HostPort(primary->host, primary->port)) {
    spdlog::info("coordination: sentinels name {} as the primary of '{}'{}", HostPort(primary->host, primary->port),
                 endpoint_.master_name, before.empty() ? "" : " (was " + before + ")");
  }
  return primary;
}

std::string CoordinationRedisBackend::ScriptSha(ScriptId id) {
  MutexLock lock(mu_);
  return script_sha_[id];
}

Result<std::unique_ptr<CoordinationRedisBackend::Connection>> CoordinationRedisBackend::TakeConnection(
    MonoTime deadline) {
  {
    MutexLock lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Connection> c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  return Connect(deadline);
}

void CoordinationRedisBackend::ReturnConnection(std::unique_ptr<Connection> connection) {
  MutexLock lock(mu_);
  // A connection to a primary the sentinels no longer name (or not asked again yet) is not kept.
  if (server_host_.empty() || connection->server() != HostPort(server_host_, server_port_)) return;
  if (idle_.size() < static_cast<size_t>(endpoint_.max_idle_connections)) idle_.push_back(std::move(connection));
}

void CoordinationRedisBackend::DropIdleConnections() {
  ForgetPrimary();
  std::vector<std::unique_ptr<Connection>> dropped;
  MutexLock lock(mu_);
  dropped.swap(idle_);
}

Result<std::unique_ptr<CoordinationRedisBackend::Connection>> CoordinationRedisBackend::Connect(MonoTime deadline) {
  auto server = Server(deadline);
  if (!server.ok()) return server.status();
  const std::string where = "redis " + HostPort(server->host, server->port);
  const Duration connect_timeout = AttemptTimeout(deadline);
  if (connect_timeout <= Duration::zero()) {
    return Status::Timeout(where + ": no time left to connect before the deadline");
  }
  redisContext* c = redisConnectWithTimeout(server->host.c_str(), server->port, ToTimeval(connect_timeout));
  if (c == nullptr) return Status::Unavailable(where + ": cannot allocate a connection");
  if (c->err != 0) {
    Status s = Status::Unavailable(where + ": connect failed: " + c->errstr);
    redisFree(c);
    ForgetPrimary();  // sentinel mode: it may have died in a failover; ask again next time
    return s;
  }
  redisEnableKeepAlive(c);
  BoundRedisReplies(c->reader);
  // CommandOnce sets the command timeout.
  auto connection = std::make_unique<Connection>(c, HostPort(server->host, server->port));
  auto simple = [&](const std::vector<std::string>& argv, std::string_view what) -> Status {
    bool failed = false;
    auto r = CommandOnce(*connection, argv, deadline, &failed);
    if (!r.ok()) return r.status();
    if ((*r)->type == REDIS_REPLY_ERROR) {
      return Status::Unavailable(where + ": " + std::string(what) + " refused: " + Text(r->get()));
    }
    return Status::Ok();
  };
  if (!endpoint_.auth.empty()) KVCHAOS_RETURN_IF_ERROR(Authenticate(*connection, deadline));
  if (endpoint_.db > 0) {
    const std::string select = "SELECT " + std::to_string(endpoint_.db) + " (db > 0 is not available on Redis Cluster)";
    KVCHAOS_RETURN_IF_ERROR(simple({"SELECT", std::to_string(endpoint_.db)}, select));
  }
  if (resolver_ != nullptr) {
    // A sentinel may still name a primary that was demoted (or restarted as a primary before the
    // sentinels turned it into a replica): only a server that says it is the primary is used.
    bool failed = false;
    auto role = CommandOnce(*connection, {"ROLE"}, deadline, &failed);
    if (!role.ok()) return role.status();
    if (!redis_replies::RoleIsPrimary(role->get())) {
      ForgetPrimary();
      return Status::Unavailable(where + ": not the primary of '" + endpoint_.master_name + "' (ROLE says '" +
                                 redis_replies::RoleName(role->get()) + "'); the sentinels are asked again");
    }
  }
  // The scripts are loaded once per server, not per connection: a reconnect after an outage is
  // then one round trip, not six. A server that lost them (restart, SCRIPT FLUSH) answers EVALSHA
  // with NOSCRIPT, and Eval loads that one again.
  bool loaded = true;
  {
    MutexLock lock(mu_);
    for (const std::string& sha : script_sha_) loaded = loaded && !sha.empty();
  }
  for (int id = 0; id < kScriptCount && !loaded; ++id) {
    bool failed = false;
    auto r = CommandOnce(*connection, {"SCRIPT", "LOAD", kScripts[id].body}, deadline, &failed);
    if (!r.ok()) return r.status();
    if ((*r)->type != REDIS_REPLY_STRING) {
      return Status::Unavailable(where + ": SCRIPT LOAD " + kScripts[id].name + " failed: " + Text(r->get()));
    }
    MutexLock lock(mu_);
    script_sha_[id] = Text(r->get());
  }
  spdlog::info("coordination: connected to {}", Describe());
  return connection;
}

Status CoordinationRedisBackend::Authenticate(Connection& connection, MonoTime deadline) {
  // ACL form first ("user:pwd" = user and password), then upstream's single argument (a
  // requirepass that holds ':'); a server without a password is fine, as upstream never sends AUTH
  // to it (it authenticates only after a NOAUTH reply).
  std::vector<std::vector<std::string>> forms;
  if (const size_t colon = endpoint_.auth.find(':'); colon != std::string::npos) {
    if (colon > 0) forms.push_back({"AUTH", endpoint_.user, endpoint_.password});
    else forms.push_back({"AUTH", endpoint_.password});
  }
  forms.push_back({"AUTH", endpoint_.auth});
  std::string refusals;
  for (const auto& argv : forms) {
    bool failed = false;
    auto r = CommandOnce(connection, argv, deadline, &failed);
    if (!r.ok()) return r.status();
    if ((*r)->type != REDIS_REPLY_ERROR) return Status::Ok();
    const std::string err = Text(r->get());
    if (err.find("without any password configured") != std::string::npos ||
        err.find("no password is set") != std::string::npos) {
      spdlog::info("coordination: {} has no password; the URI's auth part is not needed", Describe());
      return Status::Ok();
    }
    const char* form = argv.size() == 3                ? "AUTH <user> <password>: "
                       : argv[1] == endpoint_.auth ? "AUTH <auth part>: "
                                                   : "AUTH <password>: ";
    refusals += (refusals.empty() ? "" : "; ") + std::string(form) + err;
  }
  return Status::Unavailable("redis " + connection.server() + ": AUTH refused: " + refusals);
}

Result<CoordinationRedisBackend::Reply> CoordinationRedisBackend::CommandOnce(Connection& connection,
                                                                              const std::vector<std::string>& argv,
                                                                              MonoTime deadline,
                                                                              bool* connection_failed) {
  const std::string where = "redis " + connection.server();
  // Each command waits at most timeout_ms, and never past the caller's deadline.
  const Duration timeout = AttemptTimeout(deadline);
  if (timeout <= Duration::zero()) {
    *connection_failed = true;  // nothing was sent
    return Status::Timeout(where + ": " + argv[0] + ": the deadline passed before it was sent");
  }
  if (!connection.Arm(timeout)) {
    *connection_failed = true;
    return Status::Unavailable(where + ": cannot set the command timeout");
  }
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  redisContext* ctx = connection.ctx();
  auto* raw = static_cast<redisReply*>(redisCommandArgv(ctx, static_cast<int>(args.size()), args.data(), lens.data()));
  if (raw == nullptr) {
    // The connection's state is unknown now: the caller drops it.
    *connection_failed = true;
    const std::string err = ctx->errstr;
    const bool timed_out = ctx->err == REDIS_ERR_IO && (err.find("temporarily unavailable") != std::string::npos ||
                                                        err.find("timed out") != std::string::npos);
    const std::string msg = where + ": " + argv[0] + ": " +
                            (timed_out ? "no answer within " + FormatMillis(timeout) + " ms" : err);
    return timed_out ? Status::Timeout(msg) : Status::Unavailable(msg);
  }
  Reply reply(raw);
  if (reply->type == REDIS_REPLY_ERROR && TransientServerError(Text(reply.get()))) {
    *connection_failed = true;
    return Status::Unavailable(where + ": " + Text(reply.get()));
  }
  return reply;
}

Result<CoordinationRedisBackend::Reply> CoordinationRedisBackend::WithRetries(std::string_view what, MonoTime deadline,
                                                                              const AttemptFn& attempt) {
  Status last;
  int made = 0;
  for (int i = 0; i <= endpoint_.retry_count; ++i) {
    if (i > 0) {
      // A retry whose backoff would end at the deadline could not be answered in time.
      const Duration backoff = Millis(std::min<int64_t>(20 << (i - 1), 500));
      if (deadline - runtime_.Now() <= backoff) break;
      runtime_.SleepFor(backoff);
    }
    if (runtime_.Now() >= deadline) break;
    ++made;
    Result<std::unique_ptr<Connection>> connection = TakeConnection(deadline);
    if (!connection.ok()) {
      last = connection.status();
      continue;
    }
    bool failed = false;
    auto r = attempt(**connection, &failed);
    if (!failed) {
      ReturnConnection(std::move(*connection));
      return r;
    }
    last = r.status();  // the connection is dropped with *connection
    DropIdleConnections();
  }
  const std::string attempts = std::to_string(made) + " attempt(s)";
  if (made == 0) return Status::Timeout(std::string(what) + ": the deadline passed before the first attempt");
  if (made <= endpoint_.retry_count) {
    // Cut short by the caller's deadline, not out of retries.
    return Status::Timeout(std::string(what) + " gave up at the caller's deadline after " + attempts + ": " +
                           last.message());
  }
  return last.WithContext(std::string(what) + " failed after " + attempts);
}

Result<CoordinationRedisBackend::Reply> CoordinationRedisBackend::Command(const std::vector<std::string>& argv,
                                                                          std::string_view what) {
  return WithRetries(what, kNoDeadline,
                     [&](Connection& c, bool* failed) { return CommandOnce(c, argv, kNoDeadline, failed); });
}

Result<CoordinationRedisBackend::Reply> CoordinationRedisBackend::Eval(ScriptId id,
                                                                       const std::vector<std::string>& keys,
                                                                       const std::vector<std::string>& args,
                                                                       MonoTime deadline) {
  auto attempt = [&](Connection& c, bool* failed) -> Result<Reply> {
    // EVALSHA; on NOSCRIPT (SCRIPT FLUSH, failover to a fresh replica) load it and run it again.
    for (int load = 0;; ++load) {
      std::vector<std::string> argv = {"EVALSHA", ScriptSha(id), std::to_string(keys.size())};
      argv.insert(argv.end(), keys.begin(), keys.end());
      argv.insert(argv.end(), args.begin(), args.end());
      auto r = CommandOnce(c, argv, deadline, failed);
      if (*failed) return r;
      if (load > 0 || (*r)->type != REDIS_REPLY_ERROR || Text(r->get()).rfind("NOSCRIPT", 0) != 0) return r;
      spdlog::info("coordination: script '{}' missing on {} (NOSCRIPT); reloading", ScriptName(id), Describe());
      auto loaded = CommandOnce(c, {"SCRIPT", "LOAD", kScripts[id].body}, deadline, failed);
      if (*failed) return loaded;
      if ((*loaded)->type != REDIS_REPLY_STRING) {
        return Status::Unavailable("redis: SCRIPT LOAD " + std::string(ScriptName(id)) +
                                   " failed: " + Text(loaded->get()));
      }
      MutexLock lock(mu_);
      script_sha_[id] = Text(loaded->get());
    }
  };
  return WithRetries(std::string("script ") + ScriptName(id), deadline, attempt);
}

Status CoordinationRedisBackend::Init() {
  // client_min_pool_size connections (at least one: it checks the server), kept idle.
  std::vector<std::unique_ptr<Connection>> opened;
  while (opened.size() < static_cast<size_t>(std::max(1, endpoint_.min_connections))) {
    Result<std::unique_ptr<Connection>> connection =
        opened.empty() ? TakeConnection(kNoDeadline) : Connect(kNoDeadline);
    if (!connection.ok()) return connection.status();
    opened.push_back(std::move(*connection));
  }
  for (auto& connection : opened) ReturnConnection(std::move(connection));
  return Status::Ok();
}

size_t CoordinationRedisBackend::IdleConnections() {
  MutexLock lock(mu_);
  return idle_.size();
}

Result<LockGrant> CoordinationRedisBackend::TryLock(std::string_view key, std::string_view holder, Duration lease,
                                                    MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("lease", lease));
  auto r = Eval(kTryLock, {LockKey(key), FenceKey(key), FenceHolderKey(key)}, {std::string(holder), PxArg(lease)},
                deadline);
  if (!r.ok()) return r.status();
  return redis_replies::TryLock(r->get(), key);
}

Status CoordinationRedisBackend::RenewLock(std::string_view key, std::string_view holder, Duration lease,
                                           MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("lease", lease));
  auto r = Eval(kRenew, {LockKey(key)}, {std::string(holder), PxArg(lease)}, deadline);
  if (!r.ok()) return r.status();
  return redis_replies::HolderOnly(r->get(), "RenewLock", key, holder);
}

Status CoordinationRedisBackend::Unlock(std::string_view key, std::string_view holder, MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  auto r = Eval(kUnlock, {LockKey(key)}, {std::string(holder)}, deadline);
  if (!r.ok()) return r.status();
  return redis_replies::HolderOnly(r->get(), "Unlock", key, holder);
}

Result<LockHolderInfo> CoordinationRedisBackend::GetLockHolder(std::string_view key, MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  auto r = Eval(kHolder, {LockKey(key), FenceKey(key), FenceHolderKey(key)}, {}, deadline);
  if (!r.ok()) return r.status();
  return redis_replies::Holder(r->get(), key);
}

Result<FencingToken> CoordinationRedisBackend::RaiseTokenFloor(std::string_view key, std::string_view holder,
                                                               FencingToken floor, MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock key", key));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidateTokenFloor(floor));
  auto r = Eval(kRaiseFloor, {LockKey(key), FenceKey(key)}, {std::string(holder), std::to_string(floor)}, deadline);
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
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("ttl", ttl));
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
