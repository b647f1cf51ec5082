#include "core/common/json_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/utf8.h"

namespace kvchaos {
namespace {

using ::testing::HasSubstr;

TEST(JsonTextTest, DumpNeverThrowsOnBytesThatAreNotUtf8) {
  const nlohmann::json j = {{"path", "blocks/\xFF\xFE.bin"}, {"ok", true}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error) << "what DumpJson protects against";
  std::string text;
  ASSERT_NO_THROW(text = DumpJson(j));
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_THAT(text, HasSubstr("blocks/\xEF\xBF\xBD"));  // U+FFFD
  EXPECT_EQ(DumpJson({{"a", 1}}, 2), "{\n  \"a\": 1\n}");
}

// Writers that produce a record's text directly must give DumpJson's bytes for every string:
// plain ASCII, escapes, control characters, DEL, UTF-8 and bytes that are not UTF-8.
TEST(JsonTextTest, AppendJsonStringWritesDumpJsonsBytes) {
  const std::vector<std::string> strings{"",           "ws-3-17",        "a\"quote",     "back\\slash",
                                         "tab\tnl\n",  std::string(1, '\0'), "\x01\x1f\x7f", "caf\xC3\xA9",
                                         "\xFF\xFE.bin", "sl/ash",        "\xE2\x82"};
  for (const std::string& s : strings) {
    std::string out = "x";
    AppendJsonString(&out, s);
    EXPECT_EQ(out, "x" + DumpJson(nlohmann::json(s))) << "AppendJsonString differs from DumpJson for the string '"
                                                      << DumpJson(nlohmann::json(s)) << "'";
  }
}

TEST(JsonTextTest, StrictParseAcceptsOrdinaryJson) {
  Result<nlohmann::json> j = ParseJsonStrict(R"({"cmd":"add","rules":[{"id":"a"},{"id":"b"}],"n":[1,[2,3]]})", "request");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["rules"][1]["id"], "b");
}

TEST(JsonTextTest, StrictParseRefusesDuplicateKeysNamingTheirPath) {
  Result<nlohmann::json> j = ParseJsonStrict(R"({"cmd":"add","cmd":"list"})", "request");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message(), "request: duplicate key 'cmd'");
  j = ParseJsonStrict(R"({"rules":[{"id":"a"},[0],{"id":"b","path":"x","id":"c"}]})", "request");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message(), "request: duplicate key 'rules[2].id'");
  EXPECT_TRUE(ParseJsonStrict(R"([{"id":"a"},{"id":"a"}])", "x").ok()) << "the same key in two objects is fine";
}

TEST(JsonTextTest, StrictParseRefusesInvalidUtf8AndEscapesSyntaxErrors) {
  Result<nlohmann::json> j = ParseJsonStrict("{\"cmd\":\"li\xFFst\"}", "request");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message(), "request: the text is not valid UTF-8 (byte 0xFF at offset 10)");
  // A syntax error right after the first byte of a two-byte character: nlohmann quotes that byte.
  j = ParseJsonStrict("\xC3\xA9", "request");
  ASSERT_FALSE(j.ok());
  EXPECT_THAT(j.status().message(), HasSubstr("request is not JSON"));
  EXPECT_TRUE(IsValidUtf8(j.status().message())) << j.status().message();
}

}  // namespace
}  // namespace kvchaos
