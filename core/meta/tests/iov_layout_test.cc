// IovLayout: built from a caller's IOV sizes (zero sizes and absurd counts refused), compared
// with sizes without expanding, and described in the words the layout-mismatch messages use.
#include "core/meta/iov_layout.h"

#include <gtest/gtest.h>

namespace kvchaos::meta {
namespace {

TEST(IovLayout, FromSizesRunLengthEncodesInOrder) {
  const std::vector<uint64_t> sizes{1000, 8000, 8000, 13000, 2768};
  Result<IovLayout> l = IovLayout::FromSizes(sizes);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->runs(), (std::vector<IovRun>{{1, 1000}, {2, 8000}, {1, 13000}, {1, 2768}}));
  EXPECT_EQ(l->iov_count(), 5u);
  EXPECT_EQ(l->total_bytes(), 32768u);
  EXPECT_EQ(l->Sizes(), sizes);
  EXPECT_EQ(l->ToString(), "1 x 1000 + 2 x 8000 + 1 x 13000 + 1 x 2768 bytes");
}

TEST(IovLayout, MatchesOnlyTheSameSizesInTheSameOrder) {
  const IovLayout l = *IovLayout::FromSizes(std::vector<uint64_t>{4096, 4096, 8192});
  EXPECT_TRUE(l.Matches(std::vector<uint64_t>{4096, 4096, 8192}));
  EXPECT_FALSE(l.Matches(std::vector<uint64_t>{4096, 8192, 4096})) << "same sizes, other order";
  EXPECT_FALSE(l.Matches(std::vector<uint64_t>{16384})) << "same total, one IOV";
  EXPECT_FALSE(l.Matches(std::vector<uint64_t>{4096, 4096})) << "a prefix";
  EXPECT_FALSE(IovLayout().Matches(std::vector<uint64_t>{1})) << "unknown matches nothing given";
}

TEST(IovLayout, FromSizesRefusesWhatCannotBeStored) {
  Result<IovLayout> zero = IovLayout::FromSizes(std::vector<uint64_t>{4096, 0, 4096});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("IOV sizes[1]: size 0"), std::string::npos) << zero.status().ToString();
  EXPECT_FALSE(IovLayout::FromSizes({}).ok()) << "a block has at least one IOV";
  EXPECT_FALSE(IovLayout::FromSizes(std::vector<uint64_t>(IovLayout::kMaxIovs + 1, 1)).ok());
  EXPECT_TRUE(IovLayout::FromSizes(std::vector<uint64_t>(IovLayout::kMaxIovs, 1)).ok());
  EXPECT_FALSE(IovLayout::FromSizes(std::vector<uint64_t>{UINT64_MAX, 1}).ok()) << "total past 2^64";
}

TEST(IovLayout, DescribesAnySizeListIncludingZeros) {
  EXPECT_EQ(DescribeIovSizes(std::vector<uint64_t>{32768}), "1 x 32768 bytes");
  EXPECT_EQ(DescribeIovSizes(std::vector<uint64_t>{0, 0, 5}), "2 x 0 + 1 x 5 bytes");
  EXPECT_EQ(DescribeIovSizes({}), "no IOVs");
}

}  // namespace
}  // namespace kvchaos::meta
