// The elector and coordination-client settings of `topology` reach the nodes alike in both modes:
// unset keys give the production defaults (what a node config without them runs), set keys give
// the simulator's config and each real node's config and coordination URI the same values.
#include "harness/elector_settings.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/election/coordination_uri.h"
#include "core/service/node_config.h"
#include "harness/real/node_cluster.h"
#include "harness/sim_mode.h"
#include "harness/tests/scenario_test_util.h"
#include "testing/temp_dir.h"

namespace kvchaos::harness {
namespace {

using testing::SimBase;

Scenario Parse(const std::string& text) {
  Result<Scenario> s = ParseScenario(text, "t.yaml");
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

// What a real node is told: its config as NodeCluster writes it (the binary is a stand-in that
// exits at once, so only the config is of interest), read back as the node reads it.
service::NodeConfig RealNodeConfig(const Topology& topology, const std::string& dir) {
  real::NodeClusterSpec spec;
  spec.kvchaos_binary = "/bin/true";
  spec.dir = dir;
  spec.nodes = 1;
  spec.lease_ms = ToMillis(topology.lease);
  spec.loop_interval_ms = ToMillis(topology.loop_interval);
  spec.elector = ElectorSettingsOf(topology);
  spec.coordination_uri = "redis://127.0.0.1:6379" + CoordinationUriQuery(spec.elector);
  spec.indexer_uri = "memory://";
  real::NodeCluster cluster(spec);
  (void)cluster.Start(std::chrono::milliseconds(1));  // fails: /bin/true never answers
  Result<service::NodeConfig> config = service::LoadNodeConfig(dir + "/node-0.yaml");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : service::NodeConfig{};
}

TEST(ElectorSettings, UnsetKeysGiveTheProductionDefaults) {
  const ElectorSettings s = ElectorSettingsOf(Parse(SimBase()).topology);
  const election::RedisEndpoint client;
  EXPECT_EQ(s.coordination_timeout_ms, client.timeout_ms);
  EXPECT_EQ(s.coordination_retries, client.retry_count);
  EXPECT_EQ(s.coordination_timeout_ms, 1000);
  EXPECT_EQ(s.coordination_retries, 2);
  EXPECT_EQ(s.safety_margin_ms, -1) << "the elector's own default margin";
  EXPECT_EQ(s.forbid_campaign_ms, 0);
  Result<SimPlan> plan = PlanSimRun(Parse(SimBase()), 1);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->config.backend_timeout_ms, 1000) << "sim mode must run the production client, not the simulator's";
  EXPECT_EQ(plan->config.backend_retries, 2);
  EXPECT_EQ(plan->config.safety_margin_ms, -1);
  kvchaos::testing::TempDir dir("kvchaos-elector-settings");
  const service::NodeConfig node = RealNodeConfig(Parse(SimBase()).topology, dir.path().string());
  Result<election::CoordinationUri> uri = election::ParseCoordinationUri(node.coordination_uri);
  ASSERT_TRUE(uri.ok()) << uri.status().ToString();
  EXPECT_EQ(uri->redis.timeout_ms, 1000) << "real nodes must run the production client";
  EXPECT_EQ(uri->redis.retry_count, 2);
  EXPECT_EQ(node.safety_margin_ms, -1);
  EXPECT_EQ(node.forbid_campaign_time_ms, 0);
}

TEST(ElectorSettings, BothModesGiveTheNodesTheScenariosSettings) {
  std::string text = SimBase();
  text.insert(text.find("workload:"),
              "  coordination_timeout_ms: 5000\n"
              "  coordination_retries: 3\n"
              "  safety_margin_ms: 250\n"
              "  forbid_campaign_ms: 1500\n");
  const Scenario scenario = Parse(text);

  Result<SimPlan> plan = PlanSimRun(scenario, 1);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->config.backend_timeout_ms, 5000);
  EXPECT_EQ(plan->config.backend_retries, 3);
  EXPECT_EQ(plan->config.safety_margin_ms, 250);
  EXPECT_EQ(plan->config.forbid_campaign_ms, 1500);

  kvchaos::testing::TempDir dir("kvchaos-elector-settings");
  const service::NodeConfig node = RealNodeConfig(scenario.topology, dir.path().string());
  EXPECT_EQ(node.lease_ms, 2000);
  EXPECT_EQ(node.loop_interval_ms, 100);
  EXPECT_EQ(node.safety_margin_ms, 250);
  EXPECT_EQ(node.forbid_campaign_time_ms, 1500);
  Result<election::CoordinationUri> uri = election::ParseCoordinationUri(node.coordination_uri);
  ASSERT_TRUE(uri.ok()) << uri.status().ToString();
  EXPECT_EQ(uri->redis.timeout_ms, 5000);
  EXPECT_EQ(uri->redis.retry_count, 3);
}

}  // namespace
}  // namespace kvchaos::harness
