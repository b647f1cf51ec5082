// Coordination URIs and the backend factory:
//   memory://                       one process (also what an empty URI means: single node)
//   file:///abs/dir                 processes of one host (file://localhost/abs/dir also accepted)
//   redis://[auth@]host[:port][/path]?db=N&timeout_ms=T&retry_count=R&cluster_name=C
// Redis rules follow upstream (REFERENCE.md): the DB comes only from `db` (a path such as "/1" is
// ignored, with a warning), `db > 0` needs SELECT (not on Redis Cluster), the auth part is the
// password or "user:password" (percent-decoded). Errors are InvalidConfig naming the bad part; the
// auth part is never echoed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/election/coordination_backend.h"

namespace kvchaos::election {

struct RedisEndpoint {
  std::string host;
  int port = 6379;
  std::string user;      // empty: AUTH <password>
  std::string password;  // empty with no user: no AUTH
  int db = 0;
  int64_t timeout_ms = 1000;  // connect and per-command timeout
  int retry_count = 2;        // extra attempts after a connection error or timeout
  std::string cluster_name;   // key namespace; empty = upstream default names
};

struct CoordinationUri {
  enum class Kind { kMemory, kFile, kRedis };
  Kind kind = Kind::kMemory;
  std::filesystem::path file_dir;
  RedisEndpoint redis;
};

// Parses a coordination URI; "" means memory://.
Result<CoordinationUri> ParseCoordinationUri(std::string_view uri);

// Parses `uri` and builds its backend (not yet Init()ed: the caller decides whether an unreachable
// backend at start is fatal). `runtime` must outlive the backend.
Result<std::unique_ptr<CoordinationBackend>> CreateCoordinationBackend(std::string_view uri, Runtime& runtime);

}  // namespace kvchaos::election
