#include "faultfs/rule_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvchaos::faultfs {
namespace {

using ::testing::HasSubstr;

TEST(RuleParserTest, ReadsEveryKindOfKey) {
  auto file = ParseRulesText(R"(seed: 7
rules:
  - id: slow
    path: "/blocks/**"
    ops: [read, write]
    probability: 0.25
    from: 1s
    until: 10s
    max_hits: 3
    action: latency
    dist: uniform
    latency: 1ms
    latency_max: 5ms
  - id: flip
    nth: 4
    action: flip_read_bits
    bit_rate: 0.001
  - id: torn
    every: 2
    action: torn_write
    errno: ENOSPC
    bytes: 4KiB
)", "rules.yaml");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->seed, 7u);
  ASSERT_EQ(file->rules.size(), 3u);
  const Rule& slow = file->rules[0];
  EXPECT_EQ(slow.path, "blocks/**") << "a leading '/' is dropped";
  EXPECT_EQ(slow.ops, OpBit(Op::kRead) | OpBit(Op::kWrite));
  EXPECT_EQ(slow.trigger, Trigger::kProbability);
  EXPECT_EQ(slow.from, std::chrono::seconds(1));
  EXPECT_EQ(*slow.until, std::chrono::seconds(10));
  EXPECT_EQ(slow.max_hits, 3u);
  EXPECT_EQ(slow.dist, LatencyDist::kUniform);
  EXPECT_EQ(slow.latency_max, std::chrono::milliseconds(5));
  EXPECT_EQ(file->rules[1].ops, OpBit(Op::kRead)) << "ops default to what the action applies to";
  EXPECT_EQ(file->rules[1].trigger, Trigger::kNth);
  EXPECT_EQ(file->rules[2].err, ENOSPC);
  EXPECT_EQ(*file->rules[2].bytes, 4096u);
}

TEST(RuleParserTest, DropUnsyncedFollowsCreatesAndTakesDirSync) {
  auto rule = ParseRuleText("{id: d, action: drop_unsynced, dir_sync: true}", "r");
  ASSERT_TRUE(rule.ok()) << rule.status().ToString();
  EXPECT_TRUE(rule->dir_sync);
  EXPECT_EQ(rule->ops, OpBit(Op::kWrite) | OpBit(Op::kCreate)) << "by default both data and new names are followed";
  EXPECT_FALSE(ParseRuleText("{id: d, action: drop_unsynced}", "r")->dir_sync) << "the file's own fsync is enough by default";
  auto bad = ParseRuleText("{id: d, action: drop_unsynced, dir_sync: maybe}", "r");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("dir_sync"));
  auto misplaced = ParseRuleText("{id: e, action: errno, dir_sync: true}", "r");
  ASSERT_FALSE(misplaced.ok()) << "dir_sync means nothing to an errno rule";
  EXPECT_THAT(misplaced.status().message(), HasSubstr("dir_sync"));
}

TEST(RuleParserTest, ErrorsNameFileLineAndKey) {
  auto file = ParseRulesText(R"(rules:
  - id: a
    action: errno
    errno: EBOGUS
  - id: a
    action: flip_read_bits
    ops: [write]
    colour: red
)", "rules.yaml");
  ASSERT_FALSE(file.ok());
  const std::string& m = file.status().message();
  EXPECT_THAT(m, HasSubstr("rules.yaml:4: rules[0].errno: unknown errno 'EBOGUS'"));
  EXPECT_THAT(m, HasSubstr("rules.yaml:5: rules[1].id: duplicate rule id 'a'"));
  EXPECT_THAT(m, HasSubstr("rules.yaml:7: rules[1].ops: action 'flip_read_bits' cannot apply to 'write'"));
  EXPECT_THAT(m, HasSubstr("rules.yaml:8: rules[1].colour: unknown key"));
}

TEST(RuleParserTest, RefusesEnosysBecauseTheKernelWouldStopSendingTheOp) {
  auto rule = ParseRuleText(R"({"id":"x","ops":["fsync"],"action":"errno","errno":"ENOSYS"})", "ctl");
  ASSERT_FALSE(rule.ok());
  EXPECT_THAT(rule.status().message(), HasSubstr("ENOSYS is refused"));
}

TEST(RuleParserTest, RejectsConflictingOrOutOfRangeTriggers) {
  auto rule = ParseRuleText("{id: x, action: errno, every: 2, nth: 3}", "ctl");
  ASSERT_FALSE(rule.ok());
  EXPECT_THAT(rule.status().message(), HasSubstr("give only one of every, nth and probability"));
  rule = ParseRuleText("{id: x, action: errno, probability: 1.5}", "ctl");
  ASSERT_FALSE(rule.ok());
  EXPECT_THAT(rule.status().message(), HasSubstr("probability: must be within [0, 1]"));
  rule = ParseRuleText("{id: x, action: latency}", "ctl");
  ASSERT_FALSE(rule.ok());
  EXPECT_THAT(rule.status().message(), HasSubstr("latency: missing"));
  rule = ParseRuleText("{id: x, action: errno, from: 5s, until: 1s}", "ctl");
  ASSERT_FALSE(rule.ok());
  EXPECT_THAT(rule.status().message(), HasSubstr("until: must be after 'from'"));
}

TEST(RuleParserTest, NonUtf8DuplicateKeysAndAliasBombsAreRefusedNamingFileLineAndKey) {
  // A non-UTF-8 id used to mount and then abort faultfs at the first fault (the log is JSON).
  auto file = ParseRulesText("rules:\n  - id: \"r\xFF\"\n    action: errno\n", "rules.yaml");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(), "rules.yaml:2: rules[0].id: the value is not valid UTF-8 (byte 0xFF at offset 1)");
  file = ParseRulesText("rules:\n  - id: a\n    action: errno\n    errno: EIO\n    errno: ENOSPC\n", "rules.yaml");
  ASSERT_FALSE(file.ok()) << "which errno was meant?";
  EXPECT_EQ(file.status().message(), "rules.yaml:5: rules[0].errno: duplicate key (first given on line 4)");
  std::string bomb = "rules:\n  - id: a\n    action: errno\n    ops: &o0 [read, read, read, read, read, read, read, read]\n";
  for (int i = 1; i <= 8; ++i) {
    bomb += "x" + std::to_string(i) + ": &o" + std::to_string(i) + " [";
    for (int k = 0; k < 8; ++k) bomb += (k ? ", *o" : "*o") + std::to_string(i - 1);
    bomb += "]\n";
  }
  file = ParseRulesText(bomb, "rules.yaml");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("rules.yaml:"));
  EXPECT_THAT(file.status().message(), HasSubstr("expands to more than 100000 nodes"));
}

TEST(RuleParserTest, MissingFileIsAnError) {
  auto file = LoadRulesFile("/nonexistent/rules.yaml");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("/nonexistent/rules.yaml"));
}

}  // namespace
}  // namespace kvchaos::faultfs
