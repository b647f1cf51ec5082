// NodeConfig from YAML: the seed's keys, defaults, and errors naming file:line: key.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/service/node_config.h"

namespace kvchaos::service {
namespace {

TEST(NodeConfigTest, ReadsTheSeedKeys) {
  auto c = ParseNodeConfig(R"(kvcm:
  coordination: {uri: "file:///tmp/kvchaos-lock"}
  leader_elector: {node_id: n1, lease_ms: 3000, loop_interval_ms: 50}
  service: {advertised_host: 10.0.0.1, meta_http_port: 7001, admin_http_port: 7002}
  meta: {indexer_uri: "memory://"}
)", "node.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->coordination_uri, "file:///tmp/kvchaos-lock");
  EXPECT_EQ(c->node_id, "n1");
  EXPECT_EQ(c->lease_ms, 3000);
  EXPECT_EQ(c->loop_interval_ms, 50);
  EXPECT_EQ(c->advertised_host, "10.0.0.1");
  EXPECT_EQ(c->meta_http_port, 7001);
  EXPECT_EQ(c->admin_http_port, 7002);
}

// The documented example is a valid config, and says what it shows.
TEST(NodeConfigTest, TheExampleConfigIsValid) {
  auto c = LoadNodeConfig(std::string(KVCHAOS_SOURCE_DIR) + "/core/service/node.example.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->coordination_uri, "redis://127.0.0.1:6379/?db=0");
  EXPECT_EQ(c->indexer_uri, "redis://127.0.0.1:6379/?db=1");
  EXPECT_EQ(c->node_id, "node-0");
  const NodeConfig defaults;
  EXPECT_EQ(c->lease_ms, defaults.lease_ms) << "the example shows the defaults";
  EXPECT_EQ(c->meta_http_port, defaults.meta_http_port);
  EXPECT_EQ(c->heartbeat_ttl_ms, defaults.heartbeat_ttl_ms);
  EXPECT_EQ(c->health_max_silence_loops, defaults.health_max_silence_loops);
}

TEST(NodeConfigTest, EmptyUriMeansSingleNodeAndDefaultsApply) {
  auto c = ParseNodeConfig("kvcm: {}\n", "node.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->coordination_uri, "");
  EXPECT_EQ(c->node_id, "") << "an unset node id is generated at start";
  EXPECT_EQ(c->lease_ms, 10000);
  EXPECT_EQ(c->loop_interval_ms, 100);
  EXPECT_EQ(c->advertised_host, "") << "an unset advertised host is chosen at start (advertised_host.h)";
}

TEST(NodeConfigTest, LegacyDistributedLockUriIsAccepted) {
  auto c = ParseNodeConfig("kvcm:\n  distributed_lock: {uri: \"memory://\"}\n", "node.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->coordination_uri, "memory://");
}

TEST(NodeConfigTest, ErrorsNameFileLineAndKey) {
  auto c = ParseNodeConfig(R"(kvcm:
  leader_elector:
    lease_ms: 100
    loop_interval_ms: 200
  service:
    meta_http_port: 70000
    bogus: 1
)", "node.yaml");
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("node.yaml:4: kvcm.leader_elector.loop_interval_ms"), std::string::npos) << m;
  EXPECT_NE(m.find("node.yaml:6: kvcm.service.meta_http_port"), std::string::npos) << m;
  EXPECT_NE(m.find("kvcm.service.bogus"), std::string::npos) << m;
}

TEST(NodeConfigTest, MillisecondKeysPastWhatADurationHoldsAreRefused) {
  // lease_ms is turned into nanoseconds; 9223372036855 ms would wrap.
  auto c = ParseNodeConfig("kvcm:\n  leader_elector:\n    lease_ms: 9223372036855\n"
                           "  service:\n    heartbeat_ttl_ms: 99999999999999999\n",
                           "node.yaml");
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("node.yaml:3: kvcm.leader_elector.lease_ms: 9223372036855 ms is out of range"), std::string::npos)
      << m;
  EXPECT_NE(m.find("node.yaml:5: kvcm.service.heartbeat_ttl_ms: 99999999999999999 ms is out of range"),
            std::string::npos)
      << m;
}

TEST(NodeConfigTest, BadCoordinationUriIsRejected) {
  auto c = ParseNodeConfig("kvcm:\n  coordination: {uri: \"zookeeper://x\"}\n", "node.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("node.yaml:2: kvcm.coordination.uri"), std::string::npos)
      << c.status().message();
}

TEST(NodeConfigTest, TestingKnobsAreRefusedWithoutTheEnvironmentSwitch) {
  const char* yaml = "kvcm:\n  service: {http_worker_threads: 2}\n  testing:\n    serve_without_lease_check: true\n";
  ::unsetenv("KVCHAOS_TESTING");
  auto refused = ParseNodeConfig(yaml, "node.yaml");
  ASSERT_FALSE(refused.ok()) << "a test-only knob must not be accepted in a normal run";
  const std::string& m = refused.status().message();
  EXPECT_NE(m.find("node.yaml:4: kvcm.testing.serve_without_lease_check"), std::string::npos) << m;
  EXPECT_NE(m.find("KVCHAOS_TESTING=1"), std::string::npos) << "the error must say how to allow it: " << m;

  ::setenv("KVCHAOS_TESTING", "1", 1);
  auto allowed = ParseNodeConfig(yaml, "node.yaml");
  ::unsetenv("KVCHAOS_TESTING");
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  EXPECT_TRUE(allowed->testing.serve_without_lease_check);
  EXPECT_EQ(allowed->http_worker_threads, 2);

  auto off = ParseNodeConfig("kvcm: {}\n", "node.yaml");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->testing.serve_without_lease_check) << "knobs are off by default";
}

TEST(NodeConfigTest, ServiceLimitsAreChecked) {
  auto c = ParseNodeConfig("kvcm:\n  service: {http_worker_threads: 0, health_max_silence_loops: 1}\n", "node.yaml");
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("kvcm.service.http_worker_threads: must be in 1..256"), std::string::npos) << m;
  EXPECT_NE(m.find("kvcm.service.health_max_silence_loops: must be >= 2"), std::string::npos) << m;
}

TEST(NodeConfigTest, HttpLimitsHaveDefaultsAndAreReadAndChecked) {
  auto d = ParseNodeConfig("kvcm: {}\n", "node.yaml");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->http.max_connections, 512);
  EXPECT_EQ(d->http.max_body_bytes, 16 << 20);
  EXPECT_EQ(d->http.max_keys_per_call, 16384);
  EXPECT_EQ(d->admin_token, "");
  auto c = ParseNodeConfig(R"(kvcm:
  service:
    http_max_connections: 100
    http_max_queued_requests: 10
    http_request_timeout_ms: 2000
    http_idle_timeout_ms: 500
    http_max_header_bytes: 8KiB
    http_max_headers: 32
    http_max_body_bytes: 1MiB
    http_max_keys_per_call: 1000
    admin_token: "0123456789abcdef"
)", "node.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->http.max_connections, 100);
  EXPECT_EQ(c->http.max_queued_requests, 10);
  EXPECT_EQ(c->http.request_timeout_ms, 2000);
  EXPECT_EQ(c->http.idle_timeout_ms, 500);
  EXPECT_EQ(c->http.max_header_bytes, 8192);
  EXPECT_EQ(c->http.max_headers, 32);
  EXPECT_EQ(c->http.max_body_bytes, 1 << 20);
  EXPECT_EQ(c->http.max_keys_per_call, 1000);
  EXPECT_EQ(c->admin_token, "0123456789abcdef");
  auto bad = ParseNodeConfig(R"(kvcm:
  service:
    http_max_connections: 0
    http_request_timeout_ms: 0
    http_max_body_bytes: 2GiB
    admin_token: short
)", "node.yaml");
  ASSERT_FALSE(bad.ok());
  const std::string& m = bad.status().message();
  EXPECT_NE(m.find("node.yaml:3: kvcm.service.http_max_connections: must be in 1..1048576"), std::string::npos) << m;
  EXPECT_NE(m.find("node.yaml:4: kvcm.service.http_request_timeout_ms: must be > 0"), std::string::npos) << m;
  EXPECT_NE(m.find("node.yaml:5: kvcm.service.http_max_body_bytes: must be in 1024..1073741824 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("node.yaml:6: kvcm.service.admin_token: must be at least 16 characters"), std::string::npos) << m;
}

}  // namespace
}  // namespace kvchaos::service
