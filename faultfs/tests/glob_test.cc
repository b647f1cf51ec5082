#include "faultfs/glob.h"

#include <gtest/gtest.h>

namespace kvchaos::faultfs {
namespace {

TEST(GlobTest, StarStaysWithinOneName) {
  EXPECT_TRUE(GlobMatch("*.blk", "a.blk"));
  EXPECT_FALSE(GlobMatch("*.blk", "dir/a.blk")) << "* must not cross '/'";
  EXPECT_TRUE(GlobMatch("dir/*", "dir/a"));
  EXPECT_FALSE(GlobMatch("dir/*", "dir/a/b"));
}

TEST(GlobTest, DoubleStarCrossesDirectoriesAndMatchesTopLevel) {
  EXPECT_TRUE(GlobMatch("**", ""));
  EXPECT_TRUE(GlobMatch("**", "a/b/c"));
  EXPECT_TRUE(GlobMatch("**/*.blk", "x.blk"));
  EXPECT_TRUE(GlobMatch("**/*.blk", "a/b/x.blk"));
  EXPECT_TRUE(GlobMatch("blocks/**", "blocks/0a/ff.blk"));
  EXPECT_FALSE(GlobMatch("blocks/**", "meta/x"));
}

TEST(GlobTest, QuestionMarkIsOneCharacterButNotSlash) {
  EXPECT_TRUE(GlobMatch("f?", "f1"));
  EXPECT_FALSE(GlobMatch("f?", "f"));
  EXPECT_FALSE(GlobMatch("a?b", "a/b"));
  EXPECT_TRUE(GlobMatch("exact", "exact"));
  EXPECT_FALSE(GlobMatch("exact", "exact2"));
}

}  // namespace
}  // namespace kvchaos::faultfs
