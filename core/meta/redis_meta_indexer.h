// RedisMetaIndexer: the meta index in Redis, one hash per key (`<prefix>meta:<key>`), with the
// newest fencing token in `<prefix>fence`. Writes run as a Lua script that compares the token with
// the stored one and writes only if it is not older, atomically with the write itself, so two
// leaders can never interleave a check and a write. Each Put or Delete is one script, so the
// conditional checks of all its keys come before any write (a Conflict changes nothing, as in
// every indexer); reads are pipelined HGETALLs.
//
// URI: redis://[auth@]host:port/?db=N&timeout_ms=T&retry_count=R&prefix=P&fence_replicas=K&fence_wait_ms=W
// (defaults db 0, timeout 1000 ms, 2 retries, prefix "kvchaos_", no fence replicas, wait timeout/2).
//
// On a replicated Redis (a Sentinel group's primary) replication is asynchronous: a promoted
// replica may lack the newest fence, and then a deposed leader's older token passes again. With
// fence_replicas=K, RaiseFence (what a new leader calls before it serves) writes the fence and
// then WAITs up to W ms on the same connection until K replicas have it, and fails (Unavailable)
// when fewer did: a term never serves on a fence a failover could take back. Records written later
// may still be lost in a failover (WAIT is not consensus); only the fence is held to this. Scripts are loaded once and run by SHA, and
// reloaded on NOSCRIPT (after a Redis restart). A lost connection is reopened on the next call;
// calls are retried retry_count times on connection errors (a write sent again is safe: the fence
// and the write ids of conditional writes, meta_indexer.h, make a late or repeated one a no-op or
// a Conflict, never an undo).
//
// Tokens are compared as decimal strings inside the script (Lua numbers are doubles and would lose
// precision above 2^53).
#pragma once

#include <hiredis/hiredis.h>

#include <memory>
#include <mutex>
#include <string>

#include "core/meta/meta_indexer.h"

namespace kvchaos::meta {

struct RedisIndexerOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string password;
  int db = 0;
  int timeout_ms = 1000;
  int retry_count = 2;
  std::string prefix = "kvchaos_";
  int fence_replicas = 0;  // replicas that must have a raised fence (WAIT) before RaiseFence succeeds
  int fence_wait_ms = 0;   // how long RaiseFence waits for them; 0 in a URI without it: timeout_ms / 2

  // InvalidConfig names the part of the URI that is wrong.
  static Result<RedisIndexerOptions> FromUri(std::string_view uri);
};

class RedisMetaIndexer final : public MetaIndexer {
 public:
  // Connects (and loads the scripts) now, so a bad address fails at startup.
  static Result<std::unique_ptr<RedisMetaIndexer>> Open(const RedisIndexerOptions& options);
  ~RedisMetaIndexer() override;

  std::string Describe() const override;
  Status Put(uint64_t fencing_token, std::span<const MetaWrite> writes) override;
  Status Delete(uint64_t fencing_token, std::span<const std::string> keys,
                std::span<const std::string> expected_write_ids = {}, std::string_view delete_id = {}) override;
  Result<std::vector<std::optional<MetaRecord>>> Get(std::span<const std::string> keys) override;
  Result<std::vector<std::string>> ListKeys(std::string_view prefix) override;
  Result<uint64_t> NewestFencingToken() override;
  // One script: the same check-and-set as the write scripts, with nothing written; with
  // fence_replicas, followed by WAIT for that many replicas.
  Status RaiseFence(uint64_t fencing_token) override;

 private:
  struct ReplyDeleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
  };
  using Reply = std::unique_ptr<redisReply, ReplyDeleter>;
  using Command = std::vector<std::string>;

  explicit RedisMetaIndexer(RedisIndexerOptions options) : options_(std::move(options)) {}

  Status ConnectLocked();
  // Sends all commands pipelined and collects the replies (a connection error fails the batch).
  Result<std::vector<Reply>> PipelineLocked(const std::vector<Command>& commands);
  // PipelineLocked with reconnect + retry on connection errors.
  Result<std::vector<Reply>> Run(const std::vector<Command>& commands);
  // Runs scripts (EVALSHA), reloading them on NOSCRIPT; maps STALE errors.
  Status RunScripts(uint64_t fencing_token, const std::vector<Command>& evalsha_commands);
  // RaiseFence with fence_replicas: the fence set (even when already there, so that this
  // connection's WAIT covers it) and WAIT, pipelined on one connection.
  Status RaiseReplicatedFence(uint64_t fencing_token);

  std::string MetaKey(std::string_view key) const { return options_.prefix + "meta:" + std::string(key); }
  std::string FenceKey() const { return options_.prefix + "fence"; }

  RedisIndexerOptions options_;
  std::mutex mu_;  // one request on the connection at a time
  redisContext* ctx_ = nullptr;
  std::string put_sha_;
  std::string delete_sha_;
  std::string fence_sha_;
  std::string fence_set_sha_;
};

}  // namespace kvchaos::meta
