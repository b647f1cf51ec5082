// Coordination URI parsing and the backend factory (see the header for the accepted forms).
#include "core/election/coordination_uri.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <set>

#include "core/election/coordination_etcd_backend.h"
#include "core/election/coordination_file_backend.h"
#include "core/election/coordination_memory_backend.h"
#include "core/election/coordination_redis_backend.h"

namespace kvchaos::election {

namespace {

// The URI as it may appear in an error: the auth part is replaced by "***".
std::string Redacted(std::string_view uri) {
  const size_t scheme = uri.find("://");
  if (scheme == std::string_view::npos) return std::string(uri);
  const size_t start = scheme + 3;
  const size_t end = std::min(uri.find_first_of("/?", start), uri.size());
  const size_t at = uri.substr(start, end - start).rfind('@');
  if (at == std::string_view::npos) return std::string(uri);
  return std::string(uri.substr(0, start)) + "***" + std::string(uri.substr(start + at));
}

Status Bad(std::string_view uri, const std::string& problem) {
  return Status::InvalidConfig("coordination URI '" + Redacted(uri) + "': " + problem);
}

constexpr int64_t kMaxPoolSize = 1024;

std::string Hex2(unsigned char c) {
  const char* digits = "0123456789abcdef";
  return {digits[c >> 4], digits[c & 15]};
}

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool PercentDecode(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    unsigned v = 0;
    auto [p, ec] = std::from_chars(in.data() + i + 1, in.data() + i + 3, v, 16);
    if (ec != std::errc() || p != in.data() + i + 3) return false;
    out->push_back(static_cast<char>(v));
    i += 2;
  }
  return true;
}

// `text` is host[:port] or [IPv6][:port]; the port stays `*port` when absent. `form` is the
// expected shape, for the message when the host is missing.
Status ParseHostPort(std::string_view uri, std::string_view text, std::string_view form, std::string* host_out,
                     int* port_out) {
  std::string_view host = text;
  std::string_view port;
  if (!host.empty() && host.front() == '[') {  // [IPv6]:port
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return Bad(uri, "host: '[' without ']'");
    port = host.substr(close + 1);
    host = host.substr(1, close - 1);
    if (!port.empty()) {
      if (port.front() != ':') return Bad(uri, "host: unexpected text after ']'");
      port.remove_prefix(1);
      if (port.empty()) return Bad(uri, "port: empty after ':'");
    }
  } else if (const size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
    if (port.empty()) return Bad(uri, "port: empty after ':'");
  }
  if (host.empty()) return Bad(uri, "host: missing (expected " + std::string(form) + ")");
  *host_out = std::string(host);
  if (!port.empty()) {
    int64_t p = 0;
    if (!ParseInt(port, &p) || p < 1 || p > 65535) {
      return Bad(uri, "port '" + std::string(port) + "' is not a number in 1..65535");
    }
    *port_out = static_cast<int>(p);
  }
  return Status::Ok();
}

// "host:port,host:port...": every item parsed, none empty, none given twice.
template <typename Address>
Status ParseHostList(std::string_view uri, std::string_view list, std::string_view form, const std::string& noun,
                     std::vector<Address>* out) {
  size_t index = 0;
  for (size_t begin = 0; begin <= list.size();) {
    const size_t comma = std::min(list.find(',', begin), list.size());
    const std::string_view item = list.substr(begin, comma - begin);
    begin = comma + 1;
    ++index;
    if (item.empty()) return Bad(uri, noun + " " + std::to_string(index) + ": empty (a stray ',')");
    Address address;
    KVCHAOS_RETURN_IF_ERROR(ParseHostPort(uri, item, form, &address.host, &address.port));
    if (std::find(out->begin(), out->end(), address) != out->end()) {
      return Bad(uri, noun + " '" + std::string(item) + "' is given twice");
    }
    out->push_back(std::move(address));
  }
  return Status::Ok();
}

// Calls `apply(name, value)` for each parameter of `query` ("a=1&b=2", after the '?'), values
// percent-decoded. Refuses an item without '=', a name given twice, and an empty value unless
// `empty_allowed(name)`.
Status ForEachQueryParameter(std::string_view uri, std::string_view query,
                             const std::function<bool(std::string_view)>& empty_allowed,
                             const std::function<Status(std::string_view, const std::string&)>& apply) {
  std::set<std::string, std::less<>> seen;
  while (!query.empty()) {
    const size_t amp = std::min(query.find('&'), query.size());
    std::string_view item = query.substr(0, amp);
    query.remove_prefix(std::min(amp + 1, query.size()));
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return Bad(uri, "query parameter '" + std::string(item) + "' has no '='");
    std::string_view name = item.substr(0, eq);
    std::string value;
    if (!PercentDecode(item.substr(eq + 1), &value)) {
      return Bad(uri, "query parameter '" + std::string(name) + "': bad %-escape");
    }
    if (!seen.insert(std::string(name)).second) {
      return Bad(uri, "query parameter '" + std::string(name) + "' is given twice");
    }
    if (value.empty() && !empty_allowed(name)) {
      return Bad(uri, "query parameter '" + std::string(name) + "' has an empty value");
    }
    KVCHAOS_RETURN_IF_ERROR(apply(name, value));
  }
  return Status::Ok();
}

// timeout_ms and retry_count, whose rules Redis and etcd URIs share. False when `name` is neither.
bool ParseCommonParameter(std::string_view uri, std::string_view name, const std::string& value, int64_t* timeout_ms,
                          int* retry_count, Status* status) {
  int64_t n = 0;
  if (name == "timeout_ms") {
    if (!ParseInt(value, &n) || n < 1 || n > 3'600'000) {
      *status = Bad(uri, "timeout_ms '" + value + "' is not a number in 1..3600000");
    } else {
      *timeout_ms = n;
    }
    return true;
  }
  if (name == "retry_count") {
    if (!ParseInt(value, &n) || n < 0 || n > 100) {
      *status = Bad(uri, "retry_count '" + value + "' is not a number in 0..100");
    } else {
      *retry_count = static_cast<int>(n);
    }
    return true;
  }
  return false;
}

// The first control character of `value` for `name`'s message, or OK.
Status CheckPrintable(std::string_view uri, std::string_view name, std::string_view value) {
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) {
      return Bad(uri, std::string(name) + " holds control character 0x" + Hex2(c) + " (only printable characters)");
    }
  }
  return Status::Ok();
}

// The auth part before the last '@' of `*authority` (removed from it), percent-decoded, into `r`.
Status ParseRedisAuth(std::string_view uri, std::string_view* authority, RedisEndpoint& r) {
  const size_t at = authority->rfind('@');
  if (at == std::string_view::npos) return Status::Ok();
  std::string auth;
  if (!PercentDecode(authority->substr(0, at), &auth)) return Bad(uri, "auth part: bad %-escape");
  if (auth.empty()) return Bad(uri, "auth part: empty before '@'");
  if (const size_t colon = auth.find(':'); colon != std::string::npos) {
    r.user = auth.substr(0, colon);
    r.password = auth.substr(colon + 1);
  } else {
    r.password = auth;
  }
  r.auth = std::move(auth);
  authority->remove_prefix(at + 1);
  return Status::Ok();
}

// The query (after '?') of redis:// and redis+sentinel://: the same keys and rules for both.
Status ParseRedisQuery(std::string_view uri, std::string_view query, RedisEndpoint& r) {
  // Upstream reads an empty cluster_name as "none" (the legacy key names); elsewhere it is a mistake.
  auto empty_allowed = [](std::string_view name) { return name == "cluster_name"; };
  auto apply = [&](std::string_view name, const std::string& value) -> Status {
    Status common;
    if (ParseCommonParameter(uri, name, value, &r.timeout_ms, &r.retry_count, &common)) return common;
    int64_t n = 0;
    if (name == "db") {
      if (!ParseInt(value, &n) || n < 0 || n > 1'000'000) {
        return Bad(uri, "db '" + value + "' is not a number >= 0");
      }
      r.db = static_cast<int>(n);
    } else if (name == "cluster_name") {
      // Any printable character, as upstream (key names are binary-safe; listing escapes glob
      // characters). Control characters would only garble logs and key listings.
      KVCHAOS_RETURN_IF_ERROR(CheckPrintable(uri, "cluster_name", value));
      r.cluster_name = value;
    } else if (name == "client_max_pool_size" || name == "client_min_pool_size") {
      // 0 keeps the default, as upstream (it applies only values > 0).
      if (!ParseInt(value, &n) || n < 0 || n > kMaxPoolSize) {
        return Bad(uri, std::string(name) + " '" + value + "' is not a number in 0.." + std::to_string(kMaxPoolSize));
      }
      if (n > 0) (name == "client_max_pool_size" ? r.max_idle_connections : r.min_connections) = static_cast<int>(n);
    } else {
      return Bad(uri, "unknown query parameter '" + std::string(name) +
                          "' (known: db, timeout_ms, retry_count, cluster_name, client_max_pool_size, "
                          "client_min_pool_size)");
    }
    return Status::Ok();
  };
  KVCHAOS_RETURN_IF_ERROR(ForEachQueryParameter(uri, query, empty_allowed, apply));
  if (r.min_connections > r.max_idle_connections) {
    return Bad(uri, "client_min_pool_size " + std::to_string(r.min_connections) + " is more than client_max_pool_size " +
                        std::to_string(r.max_idle_connections) + " (the idle connections kept)");
  }
  return Status::Ok();
}

Result<CoordinationUri> ParseRedis(std::string_view uri, std::string_view rest) {
  CoordinationUri out;
  out.kind = CoordinationUri::Kind::kRedis;
  RedisEndpoint& r = out.redis;
  const size_t authority_end = std::min(rest.find_first_of("/?"), rest.size());
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view tail = rest.substr(authority_end);
  KVCHAOS_RETURN_IF_ERROR(ParseRedisAuth(uri, &authority, r));
  KVCHAOS_RETURN_IF_ERROR(ParseHostPort(uri, authority, "redis://[auth@]host:port/?db=N", &r.host, &r.port));

  std::string_view path = tail.substr(0, std::min(tail.find('?'), tail.size()));
  std::string_view query = tail.substr(path.size());
  if (!path.empty() && path != "/") {
    spdlog::warn("coordination URI '{}': path '{}' is ignored; the Redis DB comes only from ?db=N", Redacted(uri),
                 std::string(path));
  }
  if (!query.empty()) query.remove_prefix(1);  // '?'
  KVCHAOS_RETURN_IF_ERROR(ParseRedisQuery(uri, query, r));
  return out;
}

Result<CoordinationUri> ParseRedisSentinel(std::string_view uri, std::string_view rest) {
  constexpr std::string_view kForm = "redis+sentinel://[auth@]host:port[,host:port...]/MASTER";
  CoordinationUri out;
  out.kind = CoordinationUri::Kind::kRedisSentinel;
  RedisEndpoint& r = out.redis;
  r.host.clear();
  r.port = 0;
  const size_t authority_end = std::min(rest.find_first_of("/?"), rest.size());
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view tail = rest.substr(authority_end);
  KVCHAOS_RETURN_IF_ERROR(ParseRedisAuth(uri, &authority, r));
  if (authority.empty()) return Bad(uri, "sentinels: none given (expected " + std::string(kForm) + ")");
  KVCHAOS_RETURN_IF_ERROR(ParseHostList(uri, authority, kForm, "sentinel", &r.sentinels));

  std::string_view path = tail.substr(0, std::min(tail.find('?'), tail.size()));
  std::string_view query = tail.substr(path.size());
  if (!path.empty()) path.remove_prefix(1);  // '/'
  if (path.empty()) {
    return Bad(uri, "master name: missing (expected " + std::string(kForm) + ", MASTER as in `sentinel monitor`)");
  }
  if (!PercentDecode(path, &r.master_name)) return Bad(uri, "master name: bad %-escape");
  if (r.master_name.find('/') != std::string::npos) {
    return Bad(uri, "master name '" + r.master_name + "' holds '/' (one name after the sentinels)");
  }
  for (unsigned char c : r.master_name) {
    if (c <= 0x20 || c == 0x7f) {
      return Bad(uri, "master name holds character 0x" + Hex2(c) + " (a sentinel master name has no spaces or "
                      "control characters)");
    }
  }
  if (!query.empty()) query.remove_prefix(1);  // '?'
  KVCHAOS_RETURN_IF_ERROR(ParseRedisQuery(uri, query, r));
  return out;
}

Result<CoordinationUri> ParseEtcd(std::string_view uri, std::string_view rest) {
  constexpr std::string_view kForm = "etcd://host:port[,host:port...]/?prefix=P";
  CoordinationUri out;
  out.kind = CoordinationUri::Kind::kEtcd;
  EtcdEndpoints& e = out.etcd;
  const size_t authority_end = std::min(rest.find_first_of("/?"), rest.size());
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view tail = rest.substr(authority_end);
  if (authority.find('@') != std::string_view::npos) {
    return Bad(uri, "etcd URIs take no credentials before '@' (etcd authentication is not supported)");
  }
  if (authority.empty()) return Bad(uri, "members: none given (expected " + std::string(kForm) + ")");
  KVCHAOS_RETURN_IF_ERROR(ParseHostList(uri, authority, kForm, "member", &e.members));

  std::string_view path = tail.substr(0, std::min(tail.find('?'), tail.size()));
  std::string_view query = tail.substr(path.size());
  if (!path.empty() && path != "/") {
    return Bad(uri, "path '" + std::string(path) + "': etcd URIs take none (the keys' place comes from ?prefix=)");
  }
  if (!query.empty()) query.remove_prefix(1);  // '?'
  bool retry_given = false;
  auto apply = [&](std::string_view name, const std::string& value) -> Status {
    Status common;
    if (ParseCommonParameter(uri, name, value, &e.timeout_ms, &e.retry_count, &common)) {
      retry_given = retry_given || name == "retry_count";
      return common;
    }
    if (name == "prefix") {
      KVCHAOS_RETURN_IF_ERROR(CheckPrintable(uri, "prefix", value));
      e.prefix = value;
      return Status::Ok();
    }
    return Bad(uri, "unknown query parameter '" + std::string(name) + "' (known: prefix, timeout_ms, retry_count)");
  };
  KVCHAOS_RETURN_IF_ERROR(ForEachQueryParameter(uri, query, [](std::string_view) { return false; }, apply));
  if (!retry_given) e.retry_count = std::max(2, static_cast<int>(e.members.size()) - 1);
  return out;
}

}  // namespace

Result<CoordinationUri> ParseCoordinationUri(std::string_view uri) {
  if (uri.empty() || uri == "memory://") return CoordinationUri{};
  const size_t sep = uri.find("://");
  if (sep == std::string_view::npos) {
    return Bad(uri,
               "no scheme (expected memory://, file:///dir, redis://host:port, "
               "redis+sentinel://host:port,.../MASTER or etcd://host:port,...)");
  }
  const std::string_view scheme = uri.substr(0, sep);
  const std::string_view rest = uri.substr(sep + 3);
  if (scheme == "memory") return Bad(uri, "memory:// takes nothing after '//'");
  if (scheme == "file") {
    std::string_view path = rest;
    if (path.substr(0, 9) == "localhost") path.remove_prefix(9);
    if (path.empty() || path.front() != '/') {
      return Bad(uri, "file path must be absolute with no host (file:///abs/dir), got '" + std::string(rest) + "'");
    }
    if (path.find('?') != std::string_view::npos) return Bad(uri, "file URIs take no query parameters");
    CoordinationUri out;
    out.kind = CoordinationUri::Kind::kFile;
    std::string decoded;
    if (!PercentDecode(path, &decoded)) return Bad(uri, "file path: bad %-escape");
    out.file_dir = decoded;
    return out;
  }
  if (scheme == "redis") return ParseRedis(uri, rest);
  if (scheme == "redis+sentinel") return ParseRedisSentinel(uri, rest);
  if (scheme == "etcd") return ParseEtcd(uri, rest);
  if (scheme == "redis_cluster") {
    // TryLock sets the lock and increments its fencing counter in one script; Redis Cluster runs a
    // script only over keys of one hash slot, and upstream's key names put the two in different slots.
    return Bad(uri,
               "redis_cluster:// is not supported: a lock and its fencing counter change in one script, which "
               "Redis Cluster allows only within one hash slot, and upstream's key names are not hash-tagged; "
               "use redis://host:port of a standalone Redis, or redis+sentinel://host:port,.../MASTER for a "
               "primary that Sentinels fail over");
  }
  return Bad(uri, "unknown scheme '" + std::string(scheme) + "' (known: memory, file, redis, redis+sentinel, etcd)");
}

Result<std::unique_ptr<CoordinationBackend>> CreateCoordinationBackend(std::string_view uri, Runtime& runtime) {
  auto parsed = ParseCoordinationUri(uri);
  if (!parsed.ok()) return parsed.status();
  std::unique_ptr<CoordinationBackend> backend;
  switch (parsed->kind) {
    case CoordinationUri::Kind::kMemory:
      backend = std::make_unique<CoordinationMemoryBackend>(runtime);
      break;
    case CoordinationUri::Kind::kFile:
      backend = std::make_unique<CoordinationFileBackend>(runtime, parsed->file_dir);
      break;
    case CoordinationUri::Kind::kRedis:
    case CoordinationUri::Kind::kRedisSentinel:  // the same backend; it asks the sentinels for the primary
      backend = std::make_unique<CoordinationRedisBackend>(runtime, parsed->redis);
      break;
    case CoordinationUri::Kind::kEtcd:
      backend = std::make_unique<CoordinationEtcdBackend>(runtime, parsed->etcd);
      break;
  }
  return backend;
}

}  // namespace kvchaos::election
