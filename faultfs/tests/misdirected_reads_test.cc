// misdirected_read rules: the parser's keys and errors, and the choice of the file a read is
// served from (pure: the same candidates and stream give the same source).
#include "faultfs/misdirected_reads.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "faultfs/rule_parser.h"

namespace kvchaos::faultfs {
namespace {

using ::testing::HasSubstr;

Rule ParseOne(const std::string& yaml) {
  Result<Rule> rule = ParseRuleText(yaml, "rule.yaml");
  EXPECT_TRUE(rule.ok()) << rule.status().ToString();
  return rule.ok() ? *rule : Rule{};
}

TEST(MisdirectedReadRuleTest, ParsesSourceAndAppliesToReadsOnly) {
  const Rule rule = ParseOne("{id: m, path: \"blocks/**\", action: misdirected_read, source: \"/blocks/*/*\"}");
  EXPECT_EQ(rule.action, ActionKind::kMisdirectedRead);
  EXPECT_EQ(rule.ops, OpBit(Op::kRead)) << "a misdirected read applies to reads by default";
  EXPECT_EQ(rule.source, "blocks/*/*") << "a leading '/' is dropped, as for path";
  EXPECT_EQ(RuleToJson(rule)["source"], "blocks/*/*");
  const Rule plain = ParseOne("{id: m, path: \"b/*\", action: misdirected_read}");
  EXPECT_EQ(RuleToJson(plain)["source"], "b/*") << "without source the rule's own glob is the source";
}

TEST(MisdirectedReadRuleTest, ErrorsNameTheKey) {
  Result<Rule> write = ParseRuleText("{id: m, action: misdirected_read, ops: [write]}", "rule.yaml");
  ASSERT_FALSE(write.ok());
  EXPECT_THAT(write.status().message(), HasSubstr("ops: action 'misdirected_read' cannot apply to 'write'"));
  Result<Rule> empty = ParseRuleText("{id: m, action: misdirected_read, source: \"/\"}", "rule.yaml");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("source: must name a glob"));
  Result<Rule> wrong = ParseRuleText("{id: m, action: flip_read_bits, source: \"*\"}", "rule.yaml");
  ASSERT_FALSE(wrong.ok()) << "source belongs to misdirected_read only";
  EXPECT_THAT(wrong.status().message(), HasSubstr("source"));
  Result<Rule> typo = ParseRuleText("{id: m, action: misdirected_reads}", "rule.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(typo.status().message(), HasSubstr("misdirected_read)")) << "the known actions list it";
}

TEST(MisdirectedReadSourceTest, PicksAnotherMatchingFileThatHoldsTheRange) {
  Rule rule;
  rule.action = ActionKind::kMisdirectedRead;
  rule.path = "0a/*";
  rule.source = "??" "/????";  // two literals: no trigraph
  const std::vector<FileEntry> files = {
      {"0a/self", 8192},  {"0a/aaaa", 8192}, {"0b/bbbb", 8192},
      {"0b/tiny", 100},   // too short for the range
      {"0a/aaaa.tmp", 8192},  // not matched by source
  };
  std::set<std::string> seen;
  for (uint64_t k = 1; k <= 64; ++k) {
    Rng rng = Rng(7).Split(k);
    std::optional<std::string> picked = PickMisdirectSource(rule, "0a/self", 8192, files, rng);
    ASSERT_TRUE(picked.has_value());
    seen.insert(*picked);
  }
  EXPECT_EQ(seen, (std::set<std::string>{"0a/aaaa", "0b/bbbb"}))
      << "only other files of the source glob that hold bytes up to the read's end may be picked";
}

TEST(MisdirectedReadSourceTest, SameStreamSameSourceAndNoneWithoutCandidates) {
  Rule rule;
  rule.action = ActionKind::kMisdirectedRead;
  std::vector<FileEntry> files;
  for (int i = 0; i < 20; ++i) files.push_back({"f" + std::to_string(i), 4096});
  std::vector<FileEntry> reversed(files.rbegin(), files.rend());
  Rng a = Rng(3).Split(5);
  Rng b = Rng(3).Split(5);
  EXPECT_EQ(PickMisdirectSource(rule, "f0", 4096, files, a), PickMisdirectSource(rule, "f0", 4096, reversed, b))
      << "the draw must not depend on listing order";
  Rng c(1);
  EXPECT_FALSE(PickMisdirectSource(rule, "only", 1, {{"only", 4096}}, c).has_value())
      << "a file is never served from itself";
}

}  // namespace
}  // namespace kvchaos::faultfs
