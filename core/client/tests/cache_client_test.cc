// CacheClient as an embedding service uses it: one YAML config, Open, Save, Load. In-process meta
// (memory:// and a local:// index that a node once fenced) and a node on loopback reached by
// leader discovery; checksums verified end to end (a flipped byte on disk is a ChecksumMismatch);
// block sizes from the store; config problems named by file:line: key.
#include "core/client/cache_client.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/common/rng.h"
#include "core/meta/local_meta_indexer.h"
#include "core/service/node_server.h"
#include "core/service/tests/node_test_util.h"
#include "core/store/block_id.h"
#include "testing/temp_dir.h"

namespace kvchaos::client {
namespace {

constexpr uint64_t kBlock = 64 << 10;

class CacheClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"p0", "p1"}) std::filesystem::create_directories(dir_.path() / name);
  }

  // The store keys of every config here: two backends, 64 KiB blocks in two shards.
  std::string StoreYaml() const {
    return "storage_backends: \"" + (dir_.path() / "p0").string() + ":" + (dir_.path() / "p1").string() +
           "\"\nposix_io_engine: psync\nblock_size: 64KiB\nshard_size: 32KiB\ntensor_size: 32KiB\n";
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_.path() / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // Saves `keys` with seeded bytes, loads them back and checks the bytes; returns the bytes.
  std::vector<std::vector<std::byte>> SaveAndLoad(CacheClient& client, const std::vector<std::string>& keys) {
    std::vector<std::vector<std::byte>> bytes(keys.size(), std::vector<std::byte>(client.block_size()));
    Rng rng(7);
    std::vector<BlockBuffers> blocks;
    for (auto& b : bytes) {
      for (auto& x : b) x = static_cast<std::byte>(rng.NextU64());
      blocks.push_back({std::span<std::byte>(b)});
    }
    Result<SaveResult> saved = client.Save(keys, blocks);
    EXPECT_TRUE(saved.ok()) << saved.status().ToString();
    std::vector<std::vector<std::byte>> back(keys.size(), std::vector<std::byte>(client.block_size()));
    std::vector<BlockBuffers> views;
    for (auto& b : back) views.push_back({std::span<std::byte>(b)});
    LoadResult loaded = client.Load(keys, views);
    EXPECT_TRUE(loaded.status.ok()) << loaded.status.ToString();
    EXPECT_EQ(loaded.verified, std::vector<uint8_t>(keys.size(), 1)) << "every block verified against its checksum";
    EXPECT_EQ(back, bytes) << "loaded bytes differ from the saved ones";
    return bytes;
  }

  std::filesystem::path FileOf(const std::string& key) const {
    const auto id = *store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey(key));
    for (const char* name : {"p0", "p1"}) {
      std::filesystem::path p = store::BlockPath((dir_.path() / name).string(), id);
      if (std::filesystem::exists(p)) return p;
    }
    ADD_FAILURE() << "no stored file for key " << key;
    return {};
  }

  kvchaos::testing::TempDir dir_{"kvchaos-cache-client"};
};

TEST_F(CacheClientTest, InProcessMetaSavesLoadsAndCatchesAFlippedByte) {
  const std::string config =
      Write("client.yaml", StoreYaml() + "meta:\n  storage: nfs\n  indexer: memory://\n  register: {checksum: crc64_full}\n");
  std::vector<ChecksumMismatchEvent> events;
  TransferClientOptions options;
  options.on_mismatch = [&events](const ChecksumMismatchEvent& e) { events.push_back(e); };
  auto client = CacheClient::Open(config, options);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->block_size(), kBlock) << "the block size is the store's";
  EXPECT_EQ((*client)->transfer().shard_size(), kBlock / 2);
  EXPECT_EQ((*client)->nodes(), nullptr);
  const std::vector<std::string> keys{"k0", "k1", "k2"};
  SaveAndLoad(**client, keys);

  {
    std::fstream f(FileOf("k1"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x7f');
  }
  std::vector<std::vector<std::byte>> back(3, std::vector<std::byte>(kBlock));
  std::vector<BlockBuffers> views;
  for (auto& b : back) views.push_back({std::span<std::byte>(b)});
  LoadResult r = (*client)->Load(keys, views);
  EXPECT_EQ(r.status.code(), StatusCode::kChecksumMismatch) << r.status.ToString();
  EXPECT_EQ(r.faulty, (std::vector<size_t>{1}));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].key, "k1");
}

// A local index a node once wrote carries its fence: an in-process meta writes at the newest
// token seen, so its writes are not refused as stale.
TEST_F(CacheClientTest, InProcessMetaWritesUnderTheFenceOfAnIndexANodeLeft) {
  const std::string index = (dir_.path() / "meta.json").string();
  {
    auto indexer = meta::LocalMetaIndexer::Open(index);
    ASSERT_TRUE(indexer.ok()) << indexer.status().ToString();
    ASSERT_TRUE((*indexer)->RaiseFence(41).ok());
  }
  const std::string config = Write(
      "client.yaml", StoreYaml() + "meta:\n  storage: nfs\n  indexer: local://" + index + "\n  register: {checksum: crc32_xor_int64}\n");
  auto client = CacheClient::Open(config);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  SaveAndLoad(**client, {"a", "b"});
  // Reopened without register: the storage is recovered from the index, the blocks still load.
  auto again = CacheClient::Open(Write("again.yaml", StoreYaml() + "meta:\n  storage: nfs\n  indexer: local://" + index + "\n"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  std::vector<std::byte> back(kBlock);
  std::vector<BlockBuffers> views{{std::span<std::byte>(back)}};
  EXPECT_TRUE((*again)->Load(std::vector<std::string>{"a"}, views).status.ok());
}

TEST_F(CacheClientTest, AnUnregisteredStorageSaysHowToRegisterIt) {
  auto client = CacheClient::Open(Write("client.yaml", StoreYaml() + "meta:\n  storage: nfs\n  indexer: memory://\n"));
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kNotFound) << client.status().ToString();
  EXPECT_NE(client.status().message().find("meta.register"), std::string::npos) << client.status().ToString();
  EXPECT_NE(client.status().message().find("kvchaos storage add"), std::string::npos) << client.status().ToString();
}

TEST_F(CacheClientTest, NodesMetaDiscoversTheLeaderAndRegistersTheStorage) {
  service::NodeServer node(Runtime::Real(), service::testing::FastNodeConfig("solo"), 1);
  ASSERT_TRUE(node.Start().ok());
  ASSERT_TRUE(service::testing::WaitLeader(node));
  const std::string config =
      Write("client.yaml", StoreYaml() + "meta:\n  storage: nfs\n  nodes: [\"127.0.0.1:" +
                               std::to_string(node.admin_http_port()) +
                               "\"]\n  request_timeout_ms: 1000\n  max_attempts: 5\n  register: {checksum: crc64_full}\n");
  auto client = CacheClient::Open(config);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ASSERT_NE((*client)->nodes(), nullptr);
  SaveAndLoad(**client, {"x", "y"});
  EXPECT_GE((*client)->nodes()->discovery().discoveries(), 1);
  auto registered = (*client)->meta().GetStorageConfig("nfs");
  ASSERT_TRUE(registered.ok()) << registered.status().ToString();
  EXPECT_TRUE(registered->integrity.enable_meta_checksum);
  node.Stop();
}

TEST_F(CacheClientTest, ConfigProblemsNameFileLineAndKey) {
  const std::string neither = Write("neither.yaml", StoreYaml() + "meta:\n  storage: nfs\n");
  auto a = LoadCacheClientConfig(neither);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find(neither + ":7: meta.indexer: give either meta.indexer"), std::string::npos)
      << a.status().ToString();

  const std::string bad = Write("bad.yaml", StoreYaml() +
                                                "meta:\n  storage: nfs\n  nodes: [\"no-port\"]\n  indexer: memory://\n"
                                                "  register: {checksum: md5}\n");
  auto b = LoadCacheClientConfig(bad);
  ASSERT_FALSE(b.ok());
  const std::string& m = b.status().message();
  EXPECT_NE(m.find(bad + ":8: meta.nodes: endpoint 'no-port': expected host:port"), std::string::npos) << m;
  EXPECT_NE(m.find("meta.nodes: give either meta.indexer (an in-process meta service) or meta.nodes (a cluster); both are given"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(bad + ":10: meta.register.checksum: checksum 'md5': expected crc64_full, crc32_xor_int64 or off"),
            std::string::npos)
      << m;

  const std::string timeout_in_process =
      Write("t.yaml", StoreYaml() + "meta:\n  storage: nfs\n  indexer: memory://\n  max_attempts: 3\n");
  auto c = LoadCacheClientConfig(timeout_in_process);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("meta.max_attempts: applies to meta.nodes only"), std::string::npos)
      << c.status().ToString();
}

// The documented example parses (its paths do not exist here, so it is not opened).
TEST_F(CacheClientTest, TheExampleConfigParses) {
  auto example = LoadCacheClientConfig(std::string(KVCHAOS_SOURCE_DIR) + "/core/client/client.example.yaml");
  ASSERT_TRUE(example.ok()) << example.status().ToString();
  EXPECT_EQ(example->nodes.size(), 3u);
  ASSERT_TRUE(example->register_storage.has_value());
  EXPECT_EQ(example->register_storage->integrity.algo, integrity::ChecksumAlgo::kCrc64Full);
}

}  // namespace
}  // namespace kvchaos::client
