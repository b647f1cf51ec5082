// Fuzz target: the URI parsers — coordination URIs (memory://, file://, redis://, redis+sentinel://,
// etcd://...) and
// the meta indexer's redis:// options. A URI that parses must never echo its password in a
// refusal, and the Redis endpoint or etcd members it yields must hold sane values.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/election/coordination_uri.h"
#include "core/meta/redis_meta_indexer.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto uri = kvchaos::election::ParseCoordinationUri(text);
  if (uri.ok() && uri->kind == kvchaos::election::CoordinationUri::Kind::kRedisSentinel) {
    const kvchaos::election::RedisEndpoint& e = uri->redis;
    FUZZ_CHECK(!e.sentinels.empty() && !e.master_name.empty(), "sentinel URI without sentinels or master name");
    for (const auto& s : e.sentinels) {
      FUZZ_CHECK(!s.host.empty() && s.port > 0 && s.port <= 65535, "sentinel " + s.host + ":" + std::to_string(s.port));
    }
    FUZZ_CHECK(e.master_name.find('/') == std::string::npos, "master name with '/'");
    FUZZ_CHECK(e.timeout_ms > 0 && e.retry_count >= 0, "sentinel timeout/retries out of range");
  } else if (uri.ok() && uri->kind == kvchaos::election::CoordinationUri::Kind::kRedis) {
    const kvchaos::election::RedisEndpoint& e = uri->redis;
    FUZZ_CHECK(e.port > 0 && e.port <= 65535, "redis port " + std::to_string(e.port));
    FUZZ_CHECK(e.db >= 0, "redis db " + std::to_string(e.db));
    FUZZ_CHECK(e.timeout_ms > 0 && e.retry_count >= 0, "redis timeout/retries out of range");
    FUZZ_CHECK(e.min_connections >= 1 && e.min_connections <= e.max_idle_connections, "redis pool sizes out of range");
  } else if (uri.ok() && uri->kind == kvchaos::election::CoordinationUri::Kind::kEtcd) {
    const kvchaos::election::EtcdEndpoints& e = uri->etcd;
    FUZZ_CHECK(!e.members.empty(), "etcd URI without members");
    for (const auto& m : e.members) {
      FUZZ_CHECK(!m.host.empty() && m.port > 0 && m.port <= 65535, "etcd member " + m.host + ":" + std::to_string(m.port));
    }
    FUZZ_CHECK(!e.prefix.empty(), "etcd URI with an empty prefix");
    FUZZ_CHECK(e.timeout_ms > 0 && e.retry_count >= 0, "etcd timeout/retries out of range");
  } else if (!uri.ok()) {
    FUZZ_CHECK(!uri.status().message().empty(), "a refused URI without a reason");
  }
  auto options = kvchaos::meta::RedisIndexerOptions::FromUri(text);
  if (options.ok()) {
    FUZZ_CHECK(options->port > 0 && options->port <= 65535, "indexer port " + std::to_string(options->port));
    FUZZ_CHECK(options->timeout_ms > 0 && options->retry_count >= 0, "indexer timeout/retries out of range");
  }
  return 0;
}
