#include "core/common/utf8.h"

#include <gtest/gtest.h>

namespace kvchaos {
namespace {

TEST(Utf8Test, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("k\xC3\xA9y \xE2\x82\xAC \xF0\x9F\x98\x80"));
}

TEST(Utf8Test, NamesTheFirstBadByteByOffset) {
  EXPECT_EQ(Utf8ErrorOffset("ab\xFF"), 2u);
  EXPECT_EQ(Utf8ErrorOffset("\xC0\x80"), 0u) << "overlong";
  EXPECT_EQ(Utf8ErrorOffset("x\xED\xA0\x80"), 1u) << "surrogate";
  EXPECT_EQ(Utf8ErrorOffset("\xF4\x90\x80\x80"), 0u) << "past U+10FFFF";
  EXPECT_EQ(Utf8ErrorOffset("\xE2\x82"), 0u) << "truncated sequence";
  EXPECT_EQ(Utf8Problem("id-\xFE"), "is not valid UTF-8 (byte 0xFE at offset 3)");
  EXPECT_EQ(Utf8Problem("fine"), "");
}

TEST(Utf8Test, EscapingKeepsValidCharactersAndSpellsOutBadBytes) {
  EXPECT_EQ(EscapeInvalidUtf8("r\xC3\xA9gle-\xFF\xFE"), "r\xC3\xA9gle-\\xFF\\xFE");
  EXPECT_TRUE(IsValidUtf8(EscapeInvalidUtf8("\xC3(\xED\xA0\x80")));
}

}  // namespace
}  // namespace kvchaos
