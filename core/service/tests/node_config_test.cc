// NodeConfig from YAML: the seed's keys, defaults, and errors naming file:line: key.
#include <gtest/gtest.h>

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

TEST(NodeConfigTest, EmptyUriMeansSingleNodeAndDefaultsApply) {
  auto c = ParseNodeConfig("kvcm: {}\n", "node.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->coordination_uri, "");
  EXPECT_EQ(c->node_id, "") << "an unset node id is generated at start";
  EXPECT_EQ(c->lease_ms, 10000);
  EXPECT_EQ(c->loop_interval_ms, 100);
  EXPECT_EQ(c->advertised_host, "127.0.0.1");
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

TEST(NodeConfigTest, BadCoordinationUriIsRejected) {
  auto c = ParseNodeConfig("kvcm:\n  coordination: {uri: \"zookeeper://x\"}\n", "node.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("node.yaml:2: kvcm.coordination.uri"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace kvchaos::service
