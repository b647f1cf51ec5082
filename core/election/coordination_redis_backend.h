// CoordinationRedisBackend: the production backend, on hiredis (synchronous API; each call uses a
// connection of its own from a small pool, so concurrent calls never wait for each other's reply).
// Keys follow upstream so mixed clusters agree on who leads: `kvcm_<cluster>_lock:<key>` holds the
// holder id with a PX expiry, `kvcm_<cluster>_kv:<key>` holds values (`kvcm_lock:` / `kvcm_kv:`
// without a cluster name). kvchaos adds `kvcm_<cluster>_fence:<key>`, a counter INCRed inside the
// TryLock script, which is the fencing token, and `kvcm_<cluster>_fence_holder:<key>`, the holder
// that took it: an upstream peer takes the lock with a plain SET and no token, and GetLockHolder
// then reports none for it (docs/upstream-compat.md). The counter never expires, so it only
// grows — as long as Redis keeps its data: a Redis that restarts without persistence (no AOF/RDB) or fails over to a replica
// that missed the INCR hands out smaller tokens again. The elector then raises the counter past the
// fenced index's newest token with RaiseTokenFloor (one script: holder check, SET, INCR) before it
// leads, so the term still fences the old ones out; appendonly is still advised.)
// AUTH (the URI's auth part, percent-decoded): "pwd" is sent as `AUTH pwd`; "user:pwd" first as
// `AUTH user pwd` (an ACL user; ":pwd" as `AUTH pwd`), and when that is refused as `AUTH user:pwd`,
// one argument, as upstream sends it (a requirepass holding ':'). So one URI works against a
// requirepass server and an ACL user alike, as it does for upstream peers. A server with no
// password answers AUTH with an error; that counts as success, since upstream (which sends AUTH
// only after a NOAUTH reply) works there too.
// Each operation on a lock is one Lua script, loaded once (SCRIPT LOAD) and run with EVALSHA;
// NOSCRIPT (after SCRIPT FLUSH or a restart) reloads it and runs it again. A connection error or
// timeout drops the connection and retries up to retry_count times with a short backoff taken
// through the Runtime, so a call lasts at most about (retry_count+1) × timeout_ms plus backoff —
// or until a lock call's deadline, whichever is sooner: every connect and command waits at most
// min(timeout_ms, time to the deadline) (redisSetTimeout before each), and no retry or backoff
// starts that could not end before it (then kTimeout).
// Sentinel mode (redis+sentinel://, RedisEndpoint::sentinels): the server is the primary the
// sentinels name (SentinelResolver), asked before the first connect; a new connection checks with
// ROLE that it reached a primary. A connection error, timeout or READONLY reply makes the next
// connect ask the sentinels again (a failover moved the primary): the retry then goes to the new
// primary, idle connections to the old one are dropped, and scripts it lacks are loaded on
// NOSCRIPT. Replication is asynchronous: a promoted replica may lack the newest lock and fencing
// counter; RaiseTokenFloor (called by the elector before it leads) keeps tokens above the fence.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/election/coordination_backend.h"
#include "core/election/coordination_uri.h"
#include "core/election/sentinel_resolver.h"

struct redisContext;
struct redisReply;

namespace kvchaos::election {

class CoordinationRedisBackend final : public CoordinationBackend {
 public:
  CoordinationRedisBackend(Runtime& runtime, RedisEndpoint endpoint);
  ~CoordinationRedisBackend() override;

  // Connects, authenticates, selects the DB and loads the scripts.
  Status Init() override;
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
  std::string Describe() const override;

  // Connections kept for the next calls (at most client_max_pool_size); for tests and operators.
  size_t IdleConnections();
  // "host:port" of the server calls go to; in sentinel mode the primary named last ("" before
  // the first connect and after a failure, until the sentinels are asked again).
  std::string CurrentServer() const;

  // Redis key names (exposed for tests and operators).
  std::string LockKey(std::string_view key) const;
  std::string FenceKey(std::string_view key) const;
  std::string FenceHolderKey(std::string_view key) const;
  std::string ValueKey(std::string_view key) const;

 private:
  struct ReplyDeleter {
    void operator()(redisReply* r) const;
  };
  using Reply = std::unique_ptr<redisReply, ReplyDeleter>;
  enum ScriptId { kTryLock = 0, kRenew, kUnlock, kHolder, kRaiseFloor, kScriptCount };
  struct Script {
    const char* name;
    const char* body;
  };
  // One server connection, used by one call at a time.
  class Connection;

  // One attempt on a live connection of its own; sets *failed when it got no answer from the
  // server (the connection is then dropped, or nothing was sent).
  using AttemptFn = std::function<Result<Reply>(Connection& connection, bool* failed)>;
  // Takes a connection (an idle one, else a new one) and runs `attempt` up to retry_count + 1
  // times with a short backoff between, never starting one (or a backoff) that cannot end by
  // `deadline`.
  Result<Reply> WithRetries(std::string_view what, MonoTime deadline, const AttemptFn& attempt);
  // One command with connection handling and retries. A Redis error reply is returned as a reply
  // (the caller decides); connection errors and timeouts become Unavailable / Timeout.
  Result<Reply> Command(const std::vector<std::string>& argv, std::string_view what);
  // EVALSHA of `script`, loading it first when needed and once more on NOSCRIPT; by `deadline`.
  Result<Reply> Eval(ScriptId id, const std::vector<std::string>& keys, const std::vector<std::string>& args,
                     MonoTime deadline);
  // Sends one command, waiting at most min(timeout_ms, time to `deadline`) for its reply.
  Result<Reply> CommandOnce(Connection& connection, const std::vector<std::string>& argv, MonoTime deadline,
                            bool* connection_failed);
  // An idle connection, else a new one (connected, authenticated, DB selected, scripts loaded).
  Result<std::unique_ptr<Connection>> TakeConnection(MonoTime deadline);
  Result<std::unique_ptr<Connection>> Connect(MonoTime deadline);
  // AUTH with the URI's auth part, by the rule in the file comment.
  Status Authenticate(Connection& connection, MonoTime deadline);
  // Keeps a connection that answered for the next call (at most endpoint_.max_idle_connections).
  void ReturnConnection(std::unique_ptr<Connection> connection);
  // After a connection failed the server may be gone (restarted, failed over): the idle ones are
  // likely dead too, and a retry must not spend its attempts on them. In sentinel mode the next
  // connect asks the sentinels for the primary again.
  void DropIdleConnections();
  // The server to connect to: the URI's, or in sentinel mode the primary (asked for when unknown).
  Result<redis_replies::PrimaryAddress> Server(MonoTime deadline);
  // Sentinel mode: the next connect asks the sentinels again.
  void ForgetPrimary();
  // min(timeout_ms, time left to `deadline`); <= 0 when the deadline has passed.
  Duration AttemptTimeout(MonoTime deadline);
  std::string ScriptSha(ScriptId id);
  std::string Prefix(std::string_view kind) const;
  static const char* ScriptName(ScriptId id);

  static const Script kScripts[kScriptCount];

  Runtime& runtime_;
  const RedisEndpoint endpoint_;
  const std::unique_ptr<SentinelResolver> resolver_;  // sentinel mode only
  mutable Mutex mu_;
  // The server connections go to: the URI's; in sentinel mode the primary named last, host ""
  // while unknown. A connection to another one is not kept.
  std::string server_host_ GUARDED_BY(mu_);
  int server_port_ GUARDED_BY(mu_) = 0;
  std::string last_primary_ GUARDED_BY(mu_);  // sentinel mode: "host:port" the sentinels named last
  // Connections no call is using. A call takes its own, so no call waits for another's reply:
  // a renewal with a deadline never queues behind a heartbeat sent into an outage. At most as
  // many connections are open as calls are in flight (one per calling thread).
  std::vector<std::unique_ptr<Connection>> idle_ GUARDED_BY(mu_);
  std::string script_sha_[kScriptCount] GUARDED_BY(mu_);  // as the server last loaded them
};

}  // namespace kvchaos::election
