// Coordination URIs and the backend factory:
//   memory://                       one process (also what an empty URI means: single node)
//   file:///abs/dir                 processes of one host (file://localhost/abs/dir also accepted)
//   redis://[auth@]host[:port][/path]?db=N&timeout_ms=T&retry_count=R&cluster_name=C
//          &client_max_pool_size=M&client_min_pool_size=K
// Redis rules follow upstream (REFERENCE.md), so an upstream URI works unchanged: the DB comes only
// from `db` (a path such as "/1" is ignored, with a warning), `db > 0` needs SELECT (not on Redis
// Cluster), the auth part is percent-decoded (how it is sent: CoordinationRedisBackend), an empty
// `cluster_name=` means the legacy `kvcm_lock:` / `kvcm_kv:` names, and a cluster name may hold any
// printable character (':' included). `redis_cluster://` is refused with what to use instead.
//   etcd://host[:port][,host[:port]...][/]?prefix=P&timeout_ms=T&retry_count=R
//          the members of one etcd cluster (v3 JSON gateway, port 2379 by default), tried in turn
//          (CoordinationEtcdBackend); every key lives under `prefix` (default "kvchaos/"); no
//          credentials, no path, no TLS.
//   redis+sentinel://[auth@]host[:port][,host[:port]...]/MASTER?db=N&timeout_ms=T&retry_count=R&cluster_name=C
//          the Redis Sentinels (port 26379 by default) that name the primary of MASTER; the
//          backend is CoordinationRedisBackend, which asks them for the primary and follows a
//          failover (sentinel_resolver.h). The query takes the keys of redis://; the auth part is
//          for the Redis servers (the sentinels are asked without AUTH).
// Errors are InvalidConfig naming the bad part; the auth part is never echoed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/election/coordination_backend.h"

namespace kvchaos::election {

// A Redis Sentinel of a redis+sentinel:// URI.
struct SentinelAddress {
  std::string host;
  int port = 26379;
  friend bool operator==(const SentinelAddress&, const SentinelAddress&) = default;
};

struct RedisEndpoint {
  // The server (redis://); with sentinels, empty until they name the primary.
  std::string host;
  int port = 6379;
  // The auth part as given (percent-decoded); empty: no AUTH. `user` / `password` are its halves
  // around the first ':' (user empty when there is none), for an ACL user's two-argument AUTH.
  std::string auth;
  std::string user;
  std::string password;
  int db = 0;
  int64_t timeout_ms = 1000;  // connect and per-command timeout
  int retry_count = 2;        // extra attempts after a connection error or timeout
  std::string cluster_name;   // key namespace; empty = upstream's legacy names (kvcm_lock:)
  // Upstream's pool sizes, as kvchaos reads them: every call in flight has a connection of its own
  // (no call waits for another's reply), so client_max_pool_size bounds the idle connections kept
  // between calls, not the calls; client_min_pool_size connections are opened by Init.
  static constexpr int kDefaultMaxIdleConnections = 4;
  int max_idle_connections = kDefaultMaxIdleConnections;  // client_max_pool_size (0 in a URI: this default)
  int min_connections = 1;                                // client_min_pool_size (0 in a URI: 1)
  // redis+sentinel://: the sentinels asked, in the URI's order, for the primary of `master_name`.
  std::vector<SentinelAddress> sentinels;
  std::string master_name;
};

struct EtcdMember {
  std::string host;
  int port = 2379;
  friend bool operator==(const EtcdMember&, const EtcdMember&) = default;
};

struct EtcdEndpoints {
  std::vector<EtcdMember> members;  // in the URI's order: the first is tried first
  std::string prefix = "kvchaos/";  // every key the backend writes starts with it
  int64_t timeout_ms = 1000;        // connect and per-request timeout, as for Redis
  // Extra attempts of one request after a member gave no answer (or said it has no leader), each
  // on the next member. Default: one per other member, at least 2 (as Redis).
  int retry_count = 2;
};

struct CoordinationUri {
  enum class Kind { kMemory, kFile, kRedis, kRedisSentinel, kEtcd };
  Kind kind = Kind::kMemory;
  std::filesystem::path file_dir;
  RedisEndpoint redis;  // kRedis and kRedisSentinel
  EtcdEndpoints etcd;
};

// Parses a coordination URI; "" means memory://.
Result<CoordinationUri> ParseCoordinationUri(std::string_view uri);

// Parses `uri` and builds its backend (not yet Init()ed: the caller decides whether an unreachable
// backend at start is fatal). `runtime` must outlive the backend.
Result<std::unique_ptr<CoordinationBackend>> CreateCoordinationBackend(std::string_view uri, Runtime& runtime);

}  // namespace kvchaos::election
