// Reads NodeConfig from YAML through ConfigFile, so every message names file:line: key.
#include "core/service/node_config.h"

#include <cstdlib>
#include <string_view>

#include "core/common/config_reader.h"
#include "core/election/coordination_uri.h"

namespace kvchaos::service {
namespace {

bool TestingAllowed() {
  const char* v = std::getenv(kTestingEnvVar);
  return v != nullptr && std::string_view(v) == "1";
}

// kvcm.service.http_*: each read with its bounds, problems recorded at the key's line.
void ReadHttpLimits(ConfigSection& s, HttpLimits* l) {
  auto count = [&s](std::string_view key, int* out, int lo, int hi) {
    if (s.Optional(key, out) && (*out < lo || *out > hi)) {
      s.Problem(key, "must be in " + std::to_string(lo) + ".." + std::to_string(hi));
    }
  };
  auto millis = [&s](std::string_view key, int64_t* out) {
    if (s.OptionalMillis(key, out) && *out < 1) s.Problem(key, "must be > 0");
  };
  auto bytes = [&s](std::string_view key, int64_t* out, uint64_t lo, uint64_t hi) {
    uint64_t v = static_cast<uint64_t>(*out);
    if (!s.OptionalByteSize(key, &v)) return;
    if (v < lo || v > hi) {
      s.Problem(key, "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + " bytes");
      return;
    }
    *out = static_cast<int64_t>(v);
  };
  count("http_max_connections", &l->max_connections, 1, 1 << 20);
  count("http_max_queued_requests", &l->max_queued_requests, 1, 1 << 20);
  millis("http_request_timeout_ms", &l->request_timeout_ms);
  millis("http_idle_timeout_ms", &l->idle_timeout_ms);
  bytes("http_max_header_bytes", &l->max_header_bytes, 1024, 1 << 20);
  count("http_max_headers", &l->max_headers, 1, 4096);
  bytes("http_max_body_bytes", &l->max_body_bytes, 1024, uint64_t{1} << 30);
  count("http_max_keys_per_call", &l->max_keys_per_call, 1, 1 << 24);
}

void CheckPort(ConfigSection& s, std::string_view key, int port) {
  if (port < 0 || port > 65535) s.Problem(key, "must be a TCP port in 0..65535 (0 = any free port)");
}

Result<NodeConfig> Read(Result<ConfigFile> loaded) {
  if (!loaded.ok()) return loaded.status();
  ConfigFile& file = *loaded;
  NodeConfig c;
  ConfigSection root = file.Root();
  if (auto kvcm = root.Section("kvcm", /*required=*/true)) {
    if (auto coord = kvcm->Section("coordination")) {
      coord->Optional("uri", &c.coordination_uri);
      if (auto parsed = election::ParseCoordinationUri(c.coordination_uri); !parsed.ok()) {
        coord->Problem("uri", parsed.status().message());
      }
      coord->Done();
    } else if (auto legacy = kvcm->Section("distributed_lock")) {
      legacy->Optional("uri", &c.coordination_uri);
      if (auto parsed = election::ParseCoordinationUri(c.coordination_uri); !parsed.ok()) {
        legacy->Problem("uri", parsed.status().message());
      }
      legacy->Done();
    }
    if (auto le = kvcm->Section("leader_elector")) {
      le->Optional("node_id", &c.node_id);
      le->OptionalMillis("lease_ms", &c.lease_ms);
      le->OptionalMillis("loop_interval_ms", &c.loop_interval_ms);
      le->OptionalMillis("safety_margin_ms", &c.safety_margin_ms);
      le->OptionalMillis("forbid_campaign_time_ms", &c.forbid_campaign_time_ms);
      if (c.lease_ms <= 0) le->Problem("lease_ms", "must be > 0");
      if (c.loop_interval_ms <= 0) le->Problem("loop_interval_ms", "must be > 0");
      if (c.lease_ms > 0 && c.loop_interval_ms >= c.lease_ms) {
        le->Problem("loop_interval_ms", "must be below lease_ms (upstream advice: < lease_ms / 10)");
      }
      if (c.safety_margin_ms < -1 || (c.safety_margin_ms >= 0 && c.safety_margin_ms >= c.lease_ms)) {
        le->Problem("safety_margin_ms", "must be -1 (default) or in 0..lease_ms-1");
      }
      if (c.forbid_campaign_time_ms < 0) le->Problem("forbid_campaign_time_ms", "must be >= 0");
      le->Done();
    }
    if (auto svc = kvcm->Section("service")) {
      svc->Optional("advertised_host", &c.advertised_host);
      svc->Optional("listen_host", &c.listen_host);
      svc->Optional("meta_http_port", &c.meta_http_port);
      svc->Optional("admin_http_port", &c.admin_http_port);
      svc->Optional("advertised_meta_port", &c.advertised_meta_port);
      svc->Optional("advertised_admin_port", &c.advertised_admin_port);
      svc->OptionalMillis("heartbeat_interval_ms", &c.heartbeat_interval_ms);
      svc->OptionalMillis("heartbeat_ttl_ms", &c.heartbeat_ttl_ms);
      svc->Optional("http_worker_threads", &c.http_worker_threads);
      svc->Optional("health_max_silence_loops", &c.health_max_silence_loops);
      if (c.http_worker_threads < 1 || c.http_worker_threads > 256) {
        svc->Problem("http_worker_threads", "must be in 1..256");
      }
      ReadHttpLimits(*svc, &c.http);
      if (svc->Optional("admin_token", &c.admin_token) && !c.admin_token.empty() &&
          c.admin_token.size() < kMinAdminTokenBytes) {
        svc->Problem("admin_token", "must be at least " + std::to_string(kMinAdminTokenBytes) +
                                        " characters (a shared secret), or empty for none");
      }
      if (c.health_max_silence_loops < 2) svc->Problem("health_max_silence_loops", "must be >= 2");
      CheckPort(*svc, "meta_http_port", c.meta_http_port);
      CheckPort(*svc, "admin_http_port", c.admin_http_port);
      CheckPort(*svc, "advertised_meta_port", c.advertised_meta_port);
      CheckPort(*svc, "advertised_admin_port", c.advertised_admin_port);
      if (c.meta_http_port != 0 && c.meta_http_port == c.admin_http_port) {
        svc->Problem("admin_http_port", "must differ from meta_http_port");
      }
      if (c.listen_host.empty()) svc->Problem("listen_host", "must not be empty");
      if (c.heartbeat_interval_ms <= 0) svc->Problem("heartbeat_interval_ms", "must be > 0");
      if (c.heartbeat_ttl_ms <= c.heartbeat_interval_ms) {
        svc->Problem("heartbeat_ttl_ms", "must exceed heartbeat_interval_ms");
      }
      svc->Done();
    }
    if (auto m = kvcm->Section("meta")) {
      m->Optional("indexer_uri", &c.indexer_uri);
      if (c.indexer_uri.empty()) m->Problem("indexer_uri", "must not be empty (memory:// for none)");
      m->Done();
    }
    if (auto t = kvcm->Section("testing")) {
      const bool allowed = TestingAllowed();
      if (t->Optional("serve_without_lease_check", &c.testing.serve_without_lease_check) && !allowed) {
        t->Problem("serve_without_lease_check", std::string("test-only knob (makes the node unsafe); refused unless "
                                                            "the environment variable ") +
                                                    kTestingEnvVar + "=1 is set");
      }
      t->Done();
    }
    kvcm->Done();
  }
  root.Done();
  KVCHAOS_RETURN_IF_ERROR(file.Finish());
  return c;
}

}  // namespace

Result<NodeConfig> LoadNodeConfig(const std::string& path) { return Read(ConfigFile::Load(path)); }

Result<NodeConfig> ParseNodeConfig(std::string_view text, std::string name) {
  return Read(ConfigFile::Parse(text, std::move(name)));
}

}  // namespace kvchaos::service
