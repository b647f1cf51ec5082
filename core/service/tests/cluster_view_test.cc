// How a node names the leader and itself: leader_id comes from the lock holder, so it is known
// before the leader has published its endpoint (leader_endpoint is then null, not an error), and
// the advertised host falls back from the config to the bind address, the host name, 127.0.0.1.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/election/coordination_memory_backend.h"
#include "core/service/advertised_host.h"
#include "core/service/node_server.h"
#include "core/service/tests/node_test_util.h"

namespace kvchaos::service {
namespace {

using nlohmann::json;

HostLookup Scripted(std::optional<std::string> hostname, bool resolves) {
  HostLookup l;
  l.hostname = [hostname] { return hostname; };
  l.resolves = [resolves](const std::string&) { return resolves; };
  return l;
}

TEST(AdvertisedHostTest, ConfiguredThenBindAddressThenHostnameThenLoopback) {
  auto configured = ChooseAdvertisedHost("10.0.0.1", "0.0.0.0", Scripted("box", true));
  EXPECT_EQ(configured.host, "10.0.0.1");
  EXPECT_EQ(configured.source, "kvcm.service.advertised_host");

  auto bound = ChooseAdvertisedHost("", "192.168.1.7", Scripted("box", true));
  EXPECT_EQ(bound.host, "192.168.1.7") << "a specific bind address is where clients reach the node";
  EXPECT_EQ(bound.source, "listen_host");

  for (const char* wildcard : {"0.0.0.0", "::", "[::]", ""}) {
    auto named = ChooseAdvertisedHost("", wildcard, Scripted("box.example", true));
    EXPECT_EQ(named.host, "box.example") << "listen_host '" << wildcard << "'";
    EXPECT_EQ(named.source, "hostname");
  }

  auto unresolved = ChooseAdvertisedHost("", "0.0.0.0", Scripted("box", false));
  EXPECT_EQ(unresolved.host, "127.0.0.1") << "a host name that does not resolve is useless to clients";
  EXPECT_EQ(unresolved.source, "fallback");
  auto nameless = ChooseAdvertisedHost("", "0.0.0.0", Scripted(std::nullopt, true));
  EXPECT_EQ(nameless.host, "127.0.0.1");
  EXPECT_EQ(nameless.source, "fallback");
}

TEST(AdvertisedHostTest, TheSystemLookupWorks) {
  HostLookup system = HostLookup::System();
  EXPECT_TRUE(system.resolves("localhost")) << "localhost resolves from /etc/hosts on every supported system";
  auto name = system.hostname();
  ASSERT_TRUE(name.has_value()) << "gethostname() failed";
  EXPECT_FALSE(name->empty());
}

json ClusterInfo(int port) {
  testing::Reply r = testing::Post(port, "GetClusterInfo", "{}");
  return r.status == 200 ? r.body : json();
}

TEST(ClusterViewTest, LeaderIdComesFromTheLockHolderBeforeItsEndpointIsPublished) {
  // A leader that holds the lock but has not written its node info yet (it is still starting).
  auto backend = std::make_unique<election::CoordinationMemoryBackend>(Runtime::Real());
  election::CoordinationMemoryBackend* shared = backend.get();
  ASSERT_TRUE(
      shared->TryLock(election::kLeaderLockKey, "early-leader", std::chrono::seconds(60), election::kNoDeadline).ok());
  MetaNodeParts parts;
  parts.backend = std::move(backend);
  parts.host_lookup = Scripted("unused", true);
  NodeServer node(Runtime::Real(), testing::FastNodeConfig("follower"), 1, std::move(parts));
  ASSERT_TRUE(node.Start().ok());
  EXPECT_EQ(node.node().advertised_host().host, "127.0.0.1");
  EXPECT_EQ(node.node().advertised_host().source, "listen_host");

  json info = ClusterInfo(node.meta_http_port());
  ASSERT_TRUE(info.is_object()) << "GetClusterInfo must answer 200 while the leader is unpublished";
  EXPECT_EQ(info["code"], "OK");
  EXPECT_EQ(info["self_id"], "follower");
  EXPECT_EQ(info["leader_id"], "early-leader") << info.dump();
  EXPECT_TRUE(info["leader_endpoint"].is_null()) << info.dump();

  // Once the leader publishes its endpoint, followers hand it out.
  election::NodeEndpoint ep{"early-leader", "10.1.2.3", 0, 7001, 0, 7002};
  ASSERT_TRUE(shared->SetValue(std::string(election::kNodeInfoKeyPrefix) + "early-leader",
                               election::NodeEndpointToJson(ep)).ok());
  info = ClusterInfo(node.admin_http_port());
  EXPECT_EQ(info["leader_id"], "early-leader");
  EXPECT_EQ(info["leader_endpoint"]["host"], "10.1.2.3") << info.dump();
  EXPECT_EQ(info["leader_endpoint"]["meta_http_port"], 7001);

  // A follower's NotLeader answer carries the same endpoint.
  testing::Reply write = testing::Post(node.meta_http_port(), "StartWriteCache", R"({"keys": ["k"]})");
  EXPECT_EQ(write.status, 421);
  EXPECT_EQ(write.body["leader_endpoint"]["node_id"], "early-leader") << write.body.dump();
  node.Stop();
}

}  // namespace
}  // namespace kvchaos::service
