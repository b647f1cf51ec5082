// Block files a crash (or a peer) left missing, empty, short or cut inside a shard read as misses
// (NotFound, as upstream: no retry, no health sample), on both engines, so they can never exclude
// a healthy path; a whole file still reads. Presence tells lost blocks from present ones and
// answers "unknown" where the block's first path is out.
#include <gtest/gtest.h>

#include <fstream>

#include "core/store/posix_store.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using testing::Backends;
using testing::BlockData;
using testing::IdWithPrimary;
using testing::LoadAll;

std::string EngineName(IoEngineKind k) { return k == IoEngineKind::kAio ? "aio" : "psync"; }

// Writes the first `bytes` bytes of `block` as its committed file on `backend`.
void PlacePrefix(const std::string& backend, const BlockData& block, size_t bytes) {
  std::filesystem::create_directories(BlockDir(backend, block.id));
  std::ofstream out(BlockPath(backend, block.id), std::ios::binary | std::ios::trunc);
  for (const auto& t : block.tensors) {
    const size_t n = std::min(bytes, t->size());
    out.write(reinterpret_cast<const char*>(t->data()), static_cast<std::streamsize>(n));
    bytes -= n;
  }
}

class ShortBlockFilesTest : public ::testing::TestWithParam<IoEngineKind> {};

TEST_P(ShortBlockFilesTest, MissingEmptyShortAndCutFilesAreMissesWithoutHealthSamples) {
  Backends backends(2, /*shared=*/true);
  PosixStore store;
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  // A block is 2 shards of 8192 bytes. Every damaged file has the same primary (path 0).
  struct Case {
    const char* what;
    std::optional<size_t> bytes;  // nullopt: no file at all
  };
  const Case cases[] = {{"missing", std::nullopt}, {"empty", 0},          {"half (one shard of two)", 8192},
                        {"cut inside shard 0", 5000}, {"cut inside shard 1", 12288}};
  uint64_t start = 0;
  for (const Case& c : cases) {
    BlockData block(IdWithPrimary(0, 2, start), start);
    start += 1000;
    if (c.bytes) PlacePrefix(backends[0], block, *c.bytes);
    BlockData loaded(block.id, 1);
    const Status s = LoadAll(store, loaded);
    EXPECT_EQ(s.code(), StatusCode::kNotFound) << c.what << ": " << s.ToString();
    if (c.bytes) {
      EXPECT_NE(s.message().find("shorter than the block"), std::string::npos) << c.what << ": " << s.ToString();
    }
    // A shard that read whole is a success sample; the miss itself is no sample at all.
    for (int b = 0; b < 2; ++b) {
      EXPECT_EQ(store.backends().window(b).failures(), 0) << c.what << ": a miss counted as a failure of path " << b;
    }
    EXPECT_EQ(store.backends().window(1).count(), 0) << c.what << ": a miss must not be retried on the next path";
  }
  EXPECT_TRUE(store.backends().available(0)) << "short block files excluded a healthy path";
  EXPECT_TRUE(store.Transitions().empty());
  // A whole file on the same path still reads.
  BlockData whole(IdWithPrimary(0, 2, 90000), 7);
  PlacePrefix(backends[0], whole, 2 * 8192);
  BlockData loaded(whole.id, 1);
  ASSERT_TRUE(LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(whole));
}

TEST_P(ShortBlockFilesTest, PresenceTellsLostFromPresentBlocks) {
  Backends backends(2, /*shared=*/false);
  PosixStore store;
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  BlockData whole(IdWithPrimary(0, 2, 0), 1), shorter(IdWithPrimary(0, 2, 100), 2), gone(IdWithPrimary(0, 2, 200), 3);
  PlacePrefix(backends[0], whole, 2 * 8192);
  PlacePrefix(backends[0], shorter, 8192);
  // Only on the second path (separate storage): the first path, where reads go, does not have it.
  BlockData elsewhere(IdWithPrimary(0, 2, 300), 4);
  PlacePrefix(backends[1], elsewhere, 2 * 8192);
  Result<std::vector<BlockPresence>> p =
      store.Presence(std::vector<BlockId>{whole.id, shorter.id, gone.id, elsewhere.id});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, (std::vector<BlockPresence>{BlockPresence::kPresent, BlockPresence::kLost, BlockPresence::kLost,
                                            BlockPresence::kLost}));
  // While the first path is out, reads go elsewhere: the store cannot call anything lost.
  store.backends().Record(0, false, SampleSource::kBusiness);
  store.backends().Record(0, false, SampleSource::kBusiness);
  ASSERT_FALSE(store.backends().available(0));
  p = store.Presence(std::vector<BlockId>{whole.id, gone.id});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, (std::vector<BlockPresence>{BlockPresence::kUnknown, BlockPresence::kUnknown}));
}

// A block with an inline header is whole only with its header: a file cut inside the header region
// has all the data, yet cannot be read as its block, so it is lost (an index must not keep it).
TEST_P(ShortBlockFilesTest, PresenceCountsTheInlineHeaderOfBlocksThatHaveOne) {
  Backends backends(1, /*shared=*/false);
  PosixStore store;
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  BlockData cut(IdWithPrimary(0, 1, 0), 1);
  BlockData headed(IdWithPrimary(0, 1, 100), 2);
  // Whole data, then part of the header region, or all of it.
  auto place_with_trailer = [&](const BlockData& block, size_t trailer_bytes) {
    PlacePrefix(backends[0], block, 2 * 8192);
    std::ofstream f(BlockPath(backends[0], block.id), std::ios::binary | std::ios::app);
    const std::string trailer(trailer_bytes, 'h');
    f.write(trailer.data(), static_cast<std::streamsize>(trailer.size()));
  };
  place_with_trailer(cut, 100);
  place_with_trailer(headed, kInlineHeaderBytes);
  const std::vector<BlockId> ids{cut.id, headed.id};
  const std::vector<uint8_t> with_header{1, 1};
  Result<std::vector<BlockPresence>> p = store.Presence(ids, with_header);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, (std::vector<BlockPresence>{BlockPresence::kLost, BlockPresence::kPresent}))
      << "a file cut inside its inline header must count as lost, a whole one as present";
  p = store.Presence(ids);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, (std::vector<BlockPresence>{BlockPresence::kPresent, BlockPresence::kPresent}))
      << "without a header, the data alone is the whole block";
  EXPECT_FALSE(store.Presence(ids, std::vector<uint8_t>{1}).ok()) << "one flag per block, or none";
}

INSTANTIATE_TEST_SUITE_P(Engines, ShortBlockFilesTest, ::testing::Values(IoEngineKind::kPsync, IoEngineKind::kAio),
                         [](const auto& param_info) { return EngineName(param_info.param); });

}  // namespace
}  // namespace kvchaos::store
