// RebuildIndex against a node on loopback (meta.nodes): the entries are written through the
// HttpMetaClient's StartWrite/FinishWrite, so they reach the leader and are fenced with its term,
// and what the node stores is what the writer's Save stored (location, checksum, IOV layout, the
// inline header version), so every key loads verified again.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/client/cache_client.h"
#include "core/client/index_rebuild.h"
#include "core/common/rng.h"
#include "core/service/node_server.h"
#include "core/service/tests/node_test_util.h"
#include "testing/temp_dir.h"

namespace kvchaos::client {
namespace {

TEST(IndexRebuildNode, EntriesTheNodeLostComeBackThroughTheLeader) {
  kvchaos::testing::TempDir dir("kvchaos-rebuild-node");
  for (const char* name : {"p0", "p1"}) std::filesystem::create_directories(dir.path() / name);
  service::NodeServer node(Runtime::Real(), service::testing::FastNodeConfig("solo"), 1);
  ASSERT_TRUE(node.Start().ok());
  ASSERT_TRUE(service::testing::WaitLeader(node));
  const std::string config = (dir.path() / "client.yaml").string();
  std::ofstream(config) << "storage_backends: \"" << (dir.path() / "p0").string() << ":"
                        << (dir.path() / "p1").string()
                        << "\"\nblock_size: 64KiB\nshard_size: 32KiB\ntensor_size: 32KiB\nmeta:\n  storage: nfs\n"
                        << "  nodes: [\"127.0.0.1:" << node.admin_http_port() << "\"]\n  request_timeout_ms: 2000\n";
  {
    HttpMetaClient admin(Runtime::Real(), LeaderDiscoveryOptions{{"127.0.0.1:" + std::to_string(node.admin_http_port())}});
    meta::StorageConfig storage;
    storage.type = "posix";
    storage.global_unique_name = "nfs";
    storage.integrity.enable_meta_checksum = true;
    storage.integrity.algo = integrity::ChecksumAlgo::kCrc64Full;
    storage.integrity.enable_inline_header = true;
    storage.integrity.inline_header_version = 1;
    Status s = admin.AddStorage(storage);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  auto client = CacheClient::Open(config);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ASSERT_NE((*client)->nodes(), nullptr) << "the client does not talk to the node";

  std::vector<std::string> keys;
  for (int i = 0; i < 12; ++i) keys.push_back("node-key-" + std::to_string(i));
  const uint64_t block = (*client)->block_size();
  std::vector<std::vector<std::byte>> bytes(keys.size(), std::vector<std::byte>(block));
  std::vector<BlockBuffers> views;
  Rng rng(21);
  for (auto& b : bytes) {
    for (auto& x : b) x = static_cast<std::byte>(rng.NextU64());
    views.push_back({std::span<std::byte>(b).first(4096), std::span<std::byte>(b).subspan(4096)});
  }
  Result<SaveResult> saved = (*client)->Save(keys, views);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  auto original = (*client)->meta().GetLocations(keys);
  ASSERT_TRUE(original.ok()) << original.status().ToString();
  ASSERT_TRUE((*client)->meta().Remove(keys).ok());  // the node's index lost them

  IndexRebuildOptions o;
  o.storage = "nfs";
  o.backends = (*client)->posix_store().config().storage_backends;
  o.block_size = block;
  o.shard_width = (*client)->posix_store().config().data_dir_shard_bytes;
  Result<IndexRebuildReport> r = RebuildIndex((*client)->meta(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->rebuilt, keys.size()) << r->Summary();
  EXPECT_TRUE(r->clean()) << r->Summary();
  auto rebuilt = (*client)->meta().GetLocations(keys);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE((*rebuilt)[i].has_value()) << keys[i] << " has no entry on the node after the rebuild";
    EXPECT_EQ(*(*rebuilt)[i], *(*original)[i]) << keys[i] << ": the node stores " << (*rebuilt)[i]->ToJson().dump()
                                                << ", the writer's Save stored " << (*original)[i]->ToJson().dump();
  }
  std::vector<std::vector<std::byte>> back(keys.size(), std::vector<std::byte>(block));
  std::vector<BlockBuffers> into;
  for (auto& b : back) into.push_back({std::span<std::byte>(b).first(4096), std::span<std::byte>(b).subspan(4096)});
  LoadResult loaded = (*client)->Load(keys, into);
  ASSERT_TRUE(loaded.status.ok()) << loaded.status.ToString();
  EXPECT_EQ(loaded.verified, std::vector<uint8_t>(keys.size(), 1)) << "a rebuilt key loaded unverified";
  EXPECT_EQ(back, bytes) << "a rebuilt key loaded other bytes than were saved";
  client->reset();
  node.Stop();
}

}  // namespace
}  // namespace kvchaos::client
