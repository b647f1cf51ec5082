// InlineHeader: a header reads back as written, names its key, and every damage is Corruption.
#include "core/meta/inline_header.h"

#include <gtest/gtest.h>

#include <vector>

namespace kvchaos::meta {
namespace {

std::vector<std::byte> Encoded(const InlineHeader& h) {
  std::vector<std::byte> bytes(InlineHeader::kBytes, std::byte{0xee});
  h.Encode(bytes);
  return bytes;
}

TEST(InlineHeader, RoundTripsEveryField) {
  const IovLayout layout = *IovLayout::FromSizes(std::vector<uint64_t>{4096, 4096, 8192});
  const InlineHeader h = InlineHeader::For("model/layer0/k", 16384, -42, integrity::ChecksumAlgo::kCrc64Full, layout);
  const std::vector<std::byte> bytes = Encoded(h);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), 8), "KVCHHDR1") << "the magic opens the region";
  Result<InlineHeader> back = InlineHeader::Decode(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->version, 1u);
  EXPECT_EQ(back->data_length, 16384u);
  EXPECT_EQ(back->key, std::optional<std::string>("model/layer0/k"));
  EXPECT_EQ(back->key_length, 14u);
  EXPECT_TRUE(back->checksum_present);
  EXPECT_EQ(back->checksum, -42);
  EXPECT_EQ(back->checksum_algo, integrity::ChecksumAlgo::kCrc64Full);
  EXPECT_EQ(back->layout, layout);
  EXPECT_TRUE(back->IsFor("model/layer0/k"));
  EXPECT_FALSE(back->IsFor("model/layer0/v")) << "another key of the same length is not this block's";
}

TEST(InlineHeader, WithoutChecksumOrLayout) {
  Result<InlineHeader> back =
      InlineHeader::Decode(Encoded(InlineHeader::For("k", 4096, std::nullopt, integrity::ChecksumAlgo::kCrc64Full, {})));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(back->checksum_present);
  EXPECT_EQ(back->checksum_algo, integrity::ChecksumAlgo::kUnspecified);
  EXPECT_FALSE(back->layout.known());
}

// Keys too long to store are still told apart by length and hash.
TEST(InlineHeader, LongKeysKeepLengthAndHash) {
  const std::string key(InlineHeader::kMaxStoredKeyBytes + 1, 'x');
  std::string other = key;
  other.back() = 'y';
  Result<InlineHeader> back =
      InlineHeader::Decode(Encoded(InlineHeader::For(key, 4096, std::nullopt, integrity::ChecksumAlgo::kUnspecified, {})));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(back->key.has_value());
  EXPECT_TRUE(back->IsFor(key));
  EXPECT_FALSE(back->IsFor(other));
  EXPECT_NE(back->DescribeKey().find("3009 bytes"), std::string::npos) << back->DescribeKey();
  const std::string fits(InlineHeader::kMaxStoredKeyBytes, 'z');
  EXPECT_TRUE(InlineHeader::For(fits, 1, std::nullopt, integrity::ChecksumAlgo::kUnspecified, {}).key.has_value());
}

TEST(InlineHeader, DamageIsCorruptionNamingWhat) {
  const std::vector<std::byte> good =
      Encoded(InlineHeader::For("k", 4096, 7, integrity::ChecksumAlgo::kCrc32XorInt64, {}));
  struct Case {
    size_t at;
    std::string says;
  };
  // Magic, version, size, data length, key byte, and bytes nothing uses: each caught.
  for (const Case& c : std::vector<Case>{{0, "magic"}, {8, "version"}, {12, "size"}, {16, "checksum differs"},
                                        {1088, "checksum differs"}, {4000, "checksum differs"}}) {
    std::vector<std::byte> bad = good;
    bad[c.at] ^= std::byte{0x01};
    Result<InlineHeader> r = InlineHeader::Decode(bad);
    ASSERT_FALSE(r.ok()) << "a flipped bit at " << c.at << " was accepted";
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << c.at << ": " << r.status().ToString();
  }
  const std::vector<std::byte> zeros(InlineHeader::kBytes, std::byte{0});
  EXPECT_EQ(InlineHeader::Decode(zeros).status().code(), StatusCode::kCorruption) << "a zeroed region has no header";
  EXPECT_EQ(InlineHeader::Decode(std::span(good).first(100)).status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace kvchaos::meta
