// BlockId, the upstream-compatible routing hash (REFERENCE.md's vectors) and the on-disk layout.
#include "core/store/block_id.h"

#include <gtest/gtest.h>

namespace kvchaos::store {
namespace {

struct Vector {
  const char* hex;
  uint64_t hash;
  int mod2, mod3, mod4;
};

TEST(BlockIdTest, HashMatchesUpstreamReferenceVectors) {
  const Vector vectors[] = {
      {"00000000000000000000000000000000", 0x97c63139949ab864ULL, 0, 0, 0},
      {"a1b2c3d4e5f6789012345678901234ab", 0xc4f7083b93e229e7ULL, 1, 0, 3},
      {"ffffffffffffffffffffffffffffffff", 0xf62215e27975f01dULL, 1, 2, 1},
      {"000102030405060708090a0b0c0d0e0f", 0xad258e8fcf86c7fdULL, 1, 1, 1},
  };
  for (const Vector& v : vectors) {
    Result<BlockId> id = BlockId::FromHex(v.hex);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    const uint64_t h = BlockIdHasher{}(*id);
    EXPECT_EQ(h, v.hash) << "hash of " << v.hex << " differs from upstream: routing would disagree with peers";
    EXPECT_EQ(static_cast<int>(h % 2), v.mod2) << v.hex;
    EXPECT_EQ(static_cast<int>(h % 3), v.mod3) << v.hex;
    EXPECT_EQ(static_cast<int>(h % 4), v.mod4) << v.hex;
  }
}

TEST(BlockIdTest, HexRoundTripsAndIsLowercase) {
  Result<BlockId> id = BlockId::FromHex("A1B2C3D4E5F6789012345678901234AB");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->Hex(), "a1b2c3d4e5f6789012345678901234ab");
  EXPECT_EQ(id->bytes[0], 0xa1);
  EXPECT_EQ(id->bytes[15], 0xab);
}

TEST(BlockIdTest, BadHexIsRejectedWithTheReason) {
  Result<BlockId> short_id = BlockId::FromHex("abc");
  ASSERT_FALSE(short_id.ok());
  EXPECT_NE(short_id.status().message().find("want 32 hex characters, got 3"), std::string::npos)
      << short_id.status().message();
  Result<BlockId> bad = BlockId::FromHex("0000000000000000000000000000000g");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("offset 31"), std::string::npos) << bad.status().message();
}

TEST(BlockIdTest, LayoutIsThreeHexDirectoryThenFullNameAndTmpBesideIt) {
  BlockId id = *BlockId::FromHex("a1b2c3d4e5f6789012345678901234ab");
  EXPECT_EQ(BlockDir("/mnt/p0", id), "/mnt/p0/a1b");
  EXPECT_EQ(BlockPath("/mnt/p0", id), "/mnt/p0/a1b/a1b2c3d4e5f6789012345678901234ab");
  EXPECT_EQ(BlockTmpPath("/mnt/p0", id), "/mnt/p0/a1b/a1b2c3d4e5f6789012345678901234ab.tmp");
}

TEST(BlockIdTest, HashOfOtherLengthsFollowsLibstdcxx) {
  // std::hash<std::string_view> is _Hash_bytes(seed 0xc70f6907) on 64-bit libstdc++; the tail
  // handling must agree for lengths that are not a multiple of 8.
#if defined(__GLIBCXX__) && __SIZEOF_SIZE_T__ == 8
  for (std::string_view s : {"", "a", "abcdefg", "abcdefgh", "abcdefghijklmnopq"}) {
    EXPECT_EQ(HashBytes(s.data(), s.size(), 0xc70f6907ULL), std::hash<std::string_view>{}(s)) << "'" << s << "'";
  }
#else
  GTEST_SKIP() << "only comparable with 64-bit libstdc++";
#endif
}

}  // namespace
}  // namespace kvchaos::store
