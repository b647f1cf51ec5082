#include "core/common/yaml_document_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvchaos {
namespace {

std::vector<std::string> Problems(const std::string& text, const YamlLimits& limits = {}) {
  std::vector<std::string> out;
  for (const YamlProblem& p : CheckYamlDocument(YAML::Load(text), limits)) {
    out.push_back(std::to_string(p.line) + ": " + p.path + ": " + p.problem);
  }
  return out;
}

// Ten levels of ten aliases each: 10^10 nodes once expanded, a few hundred bytes of text.
std::string AliasBomb() {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", " : "") + prev;
    text += "]\n";
  }
  return text;
}

TEST(YamlDocumentCheckTest, AFineDocumentHasNoProblems) {
  EXPECT_THAT(Problems("name: x\nlist: [1, 2, {a: b}]\nnested:\n  k: v\ndefaults: &d {a: 1}\nuse: *d\n"),
              ::testing::IsEmpty());
}

TEST(YamlDocumentCheckTest, AliasesExpandingPastTheBudgetAreRefused) {
  const std::vector<std::string> problems = Problems(AliasBomb());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], ::testing::HasSubstr("expands to more than 100000 nodes"));
  EXPECT_THAT(Problems("a: &a [1, 2]\nb: [*a, *a]\n", YamlLimits{.max_nodes = 6}),
              ::testing::ElementsAre(::testing::HasSubstr("expands to more than 6 nodes")))
      << "every use of an alias counts its nodes again";
}

TEST(YamlDocumentCheckTest, AnAliasCycleEndsAtTheDepthBound) {
  const std::vector<std::string> problems = Problems("a: &a [*a]\n");
  ASSERT_FALSE(problems.empty());
  EXPECT_THAT(problems[0], ::testing::HasSubstr("nested deeper than 64 levels"));
}

TEST(YamlDocumentCheckTest, DuplicateKeysNameLineAndKey) {
  EXPECT_THAT(Problems("a: 1\nb:\n  c: 2\n  c: 3\na: 4\n"),
              ::testing::ElementsAre("4: b.c: duplicate key (first given on line 3)",
                                     "5: a: duplicate key (first given on line 1)"));
}

TEST(YamlDocumentCheckTest, InvalidUtf8IsNamedByLineAndKeyWithoutEchoingIt) {
  EXPECT_THAT(Problems("rules:\n  - id: \"r\xFF\"\n    \xFEkey: 1\n"),
              ::testing::ElementsAre("2: rules[0].id: the value is not valid UTF-8 (byte 0xFF at offset 1)",
                                     "3: rules[0].\\xFEkey: the key is not valid UTF-8 (byte 0xFE at offset 0)"));
}

TEST(YamlDocumentCheckTest, KeysMustBeScalars) {
  EXPECT_THAT(Problems("? [a, b]\n: 1\n"),
              ::testing::ElementsAre("1: : a key must be a plain string, not a list or mapping"));
}

}  // namespace
}  // namespace kvchaos
