#include "faultfs/control_commands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "faultfs/ctl.h"

namespace kvchaos::faultfs {
namespace {

using ::testing::HasSubstr;

class ControlCommandsTest : public ::testing::Test {
 protected:
  RuleEngine engine_{1, nullptr};
  int crashes_ = 0;
  ControlCommands commands_{engine_, [this] {
                              ++crashes_;
                              return nlohmann::json{{"files", nlohmann::json::array()}};
                            }};
  nlohmann::json Run(const std::string& line) { return commands_.Handle(line); }
  size_t RuleCount() { return engine_.List().size(); }
};

TEST_F(ControlCommandsTest, BadRequestsGetAnErrorAndChangeNothing) {
  ASSERT_TRUE(Run(R"({"cmd":"add","rule":{"id":"a","action":"errno"}})")["ok"]);
  const char* bad[] = {
      "not json",
      "[1,2]",
      R"({"nocmd":1})",
      R"({"cmd":"explode"})",
      R"({"cmd":"list","extra":1})",
      R"({"cmd":"add"})",
      R"({"cmd":"add","rule":{"id":"b","action":"errno","errno":"EBOGUS"}})",
      R"({"cmd":"add","rules":[{"id":"c","action":"errno"},{"id":"a","action":"errno"}]})",
      R"({"cmd":"remove"})",
      R"({"cmd":"remove","id":"zzz"})",
      R"({"cmd":"release","id":7})",
      R"({"cmd":"release","id":"zzz"})",
  };
  for (const char* line : bad) {
    nlohmann::json reply = Run(line);
    EXPECT_FALSE(reply["ok"]) << line << " → " << reply.dump();
    EXPECT_TRUE(reply["error"].is_string()) << line;
    EXPECT_EQ(RuleCount(), 1u) << "a bad command must change nothing: " << line;
  }
  EXPECT_THAT(Run(R"({"cmd":"add","rule":{"id":"b","action":"errno","errno":"EBOGUS"}})")["error"].get<std::string>(),
              HasSubstr("errno: unknown errno 'EBOGUS'"));
}

TEST_F(ControlCommandsTest, EveryCommandWorks) {
  EXPECT_TRUE(Run(R"({"cmd":"add","rules":[{"id":"a","action":"errno"},{"id":"b","action":"hang"}]})")["ok"]);
  nlohmann::json list = Run(R"({"cmd":"list"})");
  ASSERT_EQ(list["rules"].size(), 2u);
  EXPECT_EQ(list["rules"][1]["action"], "hang");
  EXPECT_FALSE(Run(R"({"cmd":"disable"})")["enabled"]);
  EXPECT_FALSE(engine_.enabled());
  EXPECT_TRUE(Run(R"({"cmd":"enable"})")["enabled"]);
  EXPECT_EQ(Run(R"({"cmd":"release"})")["released"], 0);
  EXPECT_TRUE(Run(R"({"cmd":"remove","id":"a"})")["ok"]);
  EXPECT_EQ(Run(R"({"cmd":"stats"})")["rules"].size(), 1u);
  EXPECT_TRUE(Run(R"({"cmd":"crash"})")["ok"]);
  EXPECT_EQ(crashes_, 1);
  EXPECT_TRUE(Run(R"({"cmd":"clear"})")["ok"]);
  EXPECT_EQ(RuleCount(), 0u);
}

TEST_F(ControlCommandsTest, NonUtf8AndDuplicateKeysAreRefusedAndTheReplyIsValidJson) {
  ASSERT_TRUE(Run(R"({"cmd":"add","rule":{"id":"a","action":"errno"}})")["ok"]);
  const std::string bad[] = {
      "{\"cmd\":\"remove\",\"id\":\"a\xFF\"}",  // nlohmann's own error would quote the byte
      "\xC3",
      R"({"cmd":"remove","id":"a","id":"b"})",
      R"({"cmd":"add","rule":{"id":"b","action":"errno","errno":"EIO","errno":"ENOSPC"}})",
      R"({"cmd":"add","rules":[{"id":"c","action":"errno"},{"id":"d","id":"e","action":"errno"}]})",
  };
  for (const std::string& line : bad) {
    nlohmann::json reply = Run(line);
    EXPECT_FALSE(reply["ok"]) << line;
    std::string text;
    ASSERT_NO_THROW(text = reply.dump()) << "the reply must be valid UTF-8 for " << line;
    EXPECT_EQ(RuleCount(), 1u) << "a bad command must change nothing: " << line;
  }
  EXPECT_EQ(Run(bad[0])["error"], "request: the text is not valid UTF-8 (byte 0xFF at offset 23)");
  EXPECT_EQ(Run(bad[2])["error"], "request: duplicate key 'id'");
  EXPECT_EQ(Run(bad[3])["error"], "request: duplicate key 'rule.errno'");
  EXPECT_EQ(Run(bad[4])["error"], "request: duplicate key 'rules[1].id'");
}

TEST(CtlTest, BuildsRequestsAndExplainsBadUsage) {
  EXPECT_EQ(*BuildCtlRequest({"stats"}), R"({"cmd":"stats"})");
  EXPECT_EQ(*BuildCtlRequest({"release", "h"}), R"({"cmd":"release","id":"h"})");
  EXPECT_EQ(*BuildCtlRequest({"add", R"({"id":"x","action":"errno"})"}),
            R"({"cmd":"add","rule":{"action":"errno","id":"x"}})");
  EXPECT_FALSE(BuildCtlRequest({"remove"}).ok());
  EXPECT_FALSE(BuildCtlRequest({"frobnicate"}).ok());
  EXPECT_FALSE(BuildCtlRequest({"add", "{bad json"}).ok());
  auto twice = BuildCtlRequest({"add", R"({"id":"x","id":"y","action":"errno"})"});
  ASSERT_FALSE(twice.ok()) << "the client must not drop the first id silently";
  EXPECT_EQ(twice.status().message(), "rule: duplicate key 'id'");
  auto bytes = BuildCtlRequest({"remove", "r\xFF"});
  ASSERT_TRUE(bytes.ok()) << "building a request from an odd argument must not abort";
  auto missing = BuildCtlRequest({"add", "/nonexistent.yaml"});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent.yaml"));
}

}  // namespace
}  // namespace kvchaos::faultfs
