// Upstream's on-disk layout for every width it allows (data_dir_shard_bytes 0..5), shard
// directories made at setup, and a cache directory written the upstream way read by kvchaos byte
// for byte (and the reverse); backends de-duplicated as upstream does, so routing agrees (issue 18
// §4-§6).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "core/store/posix_store.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using testing::Backends;
using testing::BlockData;
using testing::DumpAll;
using testing::IdWithPrimary;
using testing::LoadAll;

// Upstream's file of `block`: its shards' bytes in shard order, tensors in order.
std::string UpstreamBytes(const BlockData& block) {
  std::string bytes;
  for (const auto& t : block.tensors) bytes.append(reinterpret_cast<const char*>(t->data()), t->size());
  return bytes;
}

// Upstream's path of a block: `<backend>/<first W hex>/<hex>`, or `<backend>/data/<hex>` for W = 0.
std::string UpstreamPath(const std::string& backend, const BlockId& id, int width) {
  const std::string hex = id.Hex();
  return backend + "/" + (width == 0 ? std::string("data") : hex.substr(0, static_cast<size_t>(width))) + "/" + hex;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> DirsUnder(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class UpstreamLayoutTest : public ::testing::TestWithParam<int> {};

TEST_P(UpstreamLayoutTest, BlocksGoWhereUpstreamPutsThemAndUpstreamFilesRead) {
  const int width = GetParam();
  Backends backends(1, false);
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.data_dir_shard_bytes = width;
  PosixStore store;
  ASSERT_TRUE(store.Setup(cfg).ok());
  // kvchaos writes, upstream's path holds the bytes upstream would have written.
  BlockData ours(IdWithPrimary(0, 1, 0), 11);
  ASSERT_TRUE(DumpAll(store, ours).ok());
  const std::string path = UpstreamPath(backends[0], ours.id, width);
  EXPECT_EQ(ReadFile(path), UpstreamBytes(ours)) << "width " << width << ": not upstream's file at " << path;
  EXPECT_EQ(BlockPath(backends[0], ours.id, width), path);
  // Upstream writes (its layout, its bytes), kvchaos finds and reads it byte for byte.
  BlockData theirs(IdWithPrimary(0, 1, 500), 12);
  const std::string their_path = UpstreamPath(backends[0], theirs.id, width);
  std::filesystem::create_directories(std::filesystem::path(their_path).parent_path());
  std::ofstream(their_path, std::ios::binary) << UpstreamBytes(theirs);
  auto found = store.Lookup(std::vector<BlockId>{theirs.id});
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE((*found)[0]) << "width " << width << ": an upstream block file is not found";
  BlockData loaded(theirs.id, 99);
  ASSERT_TRUE(LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(theirs)) << "width " << width << ": an upstream block read back different bytes";
  ASSERT_TRUE(store.Remove(std::vector<BlockId>{theirs.id}).ok());
  EXPECT_FALSE(std::filesystem::exists(their_path));
}

INSTANTIATE_TEST_SUITE_P(EveryWidth, UpstreamLayoutTest, ::testing::Range(0, kMaxShardWidth + 1),
                         [](const auto& param_info) { return "width" + std::to_string(param_info.param); });

// Setup makes every shard directory on every path, as upstream does (its other paths refuse to
// start without them), and an existing one is fine.
TEST(UpstreamLayoutSetupTest, SetupMakesEveryShardDirectory) {
  for (int width : {0, 1, 2}) {
    Backends backends(2, false);
    PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
    cfg.data_dir_shard_bytes = width;
    cfg.shard_dirs_at_setup = true;
    std::filesystem::create_directory(backends[1] + "/" + ShardDirNames(width).front());  // a peer made one
    PosixStore store;
    ASSERT_TRUE(store.Setup(cfg).ok()) << "width " << width;
    const std::vector<std::string> want = ShardDirNames(width);
    EXPECT_EQ(want.size(), width == 0 ? 1u : size_t{1} << (4 * width));
    for (int b = 0; b < 2; ++b) {
      EXPECT_EQ(DirsUnder(backends[b]), want) << "width " << width << ", path " << b;
    }
  }
  EXPECT_EQ(ShardDirNames(3).front(), "000");
  EXPECT_EQ(ShardDirNames(3).back(), "fff");
  EXPECT_EQ(ShardDirNames(3).size(), 4096u);
}

// Upstream keeps "/p0" and "/p0/." as two paths (it compares strings), so n = 2 and a block whose
// hash % 2 is 1 is written through the second spelling: kvchaos must count the same way.
TEST(UpstreamLayoutSetupTest, TwoSpellingsOfOnePathAreTwoPathsAsUpstream) {
  Backends backends(1, false);
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.storage_backends = {backends[0], backends[0] + "/.", backends[0] + "/"};
  PosixStore store;
  ASSERT_TRUE(store.Setup(cfg).ok());
  ASSERT_EQ(store.backends().size(), 2) << "routing n differs from upstream's for the same string: "
                                        << ::testing::PrintToString(store.backends().paths());
  EXPECT_EQ(store.backends().path(1), backends[0] + "/.");
  BlockData block(IdWithPrimary(1, 2, 0), 5);
  ASSERT_TRUE(DumpAll(store, block).ok());
  EXPECT_GT(store.backends().window(1).count(), 0) << "the block did not go to path 1 (hash % 2)";
  EXPECT_EQ(store.backends().window(0).count(), 0) << "the block went to path 0";
}

}  // namespace
}  // namespace kvchaos::store
