#include "core/common/config_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvchaos {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kStoreYaml = R"(storage_backends: "/p0:/p1"
timeout_ms: 30
io_direct: true
store_health:
  enabled: true
  health_window_size: 8
)";

TEST(ConfigReaderTest, ReadsTypedValuesAndNestedSections) {
  auto file = ConfigFile::Parse(kStoreYaml, "store.yaml");
  ASSERT_TRUE(file.ok());
  ConfigSection root = file->Root();
  std::string backends;
  int64_t timeout_ms = 0;
  bool direct = false;
  int32_t window = 0;
  bool enabled = false;
  EXPECT_TRUE(root.Required("storage_backends", &backends));
  EXPECT_TRUE(root.Optional("timeout_ms", &timeout_ms));
  EXPECT_TRUE(root.Optional("io_direct", &direct));
  auto health = root.Section("store_health");
  ASSERT_TRUE(health.has_value());
  EXPECT_TRUE(health->Optional("health_window_size", &window));
  EXPECT_TRUE(health->Optional("enabled", &enabled));
  health->Done();
  root.Done();
  EXPECT_TRUE(file->Finish().ok()) << file->Finish().ToString();
  EXPECT_EQ(backends, "/p0:/p1");
  EXPECT_EQ(timeout_ms, 30);
  EXPECT_TRUE(direct);
  EXPECT_EQ(window, 8);
}

TEST(ConfigReaderTest, MissingKeyNamesFileLineAndKey) {
  auto file = ConfigFile::Parse("timeout_ms: 30\n", "store.yaml");
  ConfigSection root = file->Root();
  std::string backends;
  EXPECT_FALSE(root.Required("storage_backends", &backends));
  Status s = file->Finish();
  EXPECT_EQ(s.code(), StatusCode::kInvalidConfig);
  EXPECT_THAT(s.message(), HasSubstr("store.yaml:1: storage_backends: missing (required)"));
}

TEST(ConfigReaderTest, IllTypedKeyNamesItsOwnLine) {
  auto file = ConfigFile::Parse(kStoreYaml, "store.yaml");
  ConfigSection root = file->Root();
  bool backends_as_bool = false;
  int32_t timeout = 0;
  EXPECT_FALSE(root.Required("storage_backends", &backends_as_bool));
  auto health = root.Section("store_health");
  EXPECT_FALSE(health->Required("enabled", &timeout));
  Status s = file->Finish();
  EXPECT_THAT(s.message(), HasSubstr("store.yaml:1: storage_backends: expected true or false, got '/p0:/p1'"));
  EXPECT_THAT(s.message(), HasSubstr("store.yaml:5: store_health.enabled: expected an integer, got 'true'"));
}

TEST(ConfigReaderTest, UnknownKeysAreReportedWithTheirLine) {
  auto file = ConfigFile::Parse("timeout_ms: 30\ntimeuot_ms: 31\nstore_health:\n  windw: 3\n", "n.yaml");
  ConfigSection root = file->Root();
  int64_t timeout = 0;
  root.Optional("timeout_ms", &timeout);
  root.Section("store_health")->Done();
  root.Done();
  Status s = file->Finish();
  EXPECT_THAT(s.message(), HasSubstr("n.yaml:2: timeuot_ms: unknown key (did you mean timeout_ms?)"));
  EXPECT_THAT(s.message(), HasSubstr("n.yaml:4: store_health.windw: unknown key"));
  EXPECT_THAT(s.message(), Not(HasSubstr("windw: unknown key ("))) << "no known key is near enough to suggest";
}

// Problems come in the order of their lines, whatever order the reader found them in, one per
// line of the message.
TEST(ConfigReaderTest, ProblemsAreListedInLineOrder) {
  auto file = ConfigFile::Parse("a: x\nb: y\nc: z\n", "o.yaml");
  ConfigSection root = file->Root();
  int32_t v = 0;
  root.Optional("c", &v);
  root.Optional("a", &v);
  root.Problem("b", "checked last");
  Status s = file->Finish();
  EXPECT_EQ(s.message(),
            "o.yaml:1: a: expected an integer, got 'x'\n"
            "o.yaml:2: b: checked last\n"
            "o.yaml:3: c: expected an integer, got 'z'");
}

TEST(ConfigReaderTest, ClosestMatchSuggestsOnlyLikelyTypos) {
  const std::vector<std::string> keys{"timeout_ms", "block_size", "shard_size", "io_direct"};
  EXPECT_EQ(ClosestMatch("timout_ms", keys), "timeout_ms");
  EXPECT_EQ(ClosestMatch("blocksize", keys), "block_size");
  EXPECT_EQ(ClosestMatch("io_dirct", keys), "io_direct");
  EXPECT_EQ(ClosestMatch("engine", keys), "") << "far from every key";
  EXPECT_EQ(ClosestMatch("ab", {"a"}), "") << "a short word needs an exact half to match";
}

TEST(ConfigReaderTest, OutOfRangeAndNegativeUnsignedAreRejected) {
  auto file = ConfigFile::Parse("a: 99999999999\nb: -1\n", "x.yaml");
  ConfigSection root = file->Root();
  int32_t a = 7;
  uint32_t b = 9;
  EXPECT_FALSE(root.Optional("a", &a));
  EXPECT_FALSE(root.Optional("b", &b));
  EXPECT_EQ(a, 7) << "a rejected value must leave the default untouched";
  EXPECT_EQ(b, 9u);
  Status s = file->Finish();
  EXPECT_THAT(s.message(), HasSubstr("x.yaml:1: a: value 99999999999 is out of range"));
  EXPECT_THAT(s.message(), HasSubstr("x.yaml:2: b: "));
}

TEST(ConfigReaderTest, ValidationProblemsAndUnitsNameTheKey) {
  auto file = ConfigFile::Parse("lease: 10x\nblock_size: 4MiB\nthreshold: 9\n", "n.yaml");
  ConfigSection root = file->Root();
  Duration lease{};
  uint64_t block = 0;
  int32_t threshold = 0;
  EXPECT_FALSE(root.OptionalDuration("lease", &lease));
  EXPECT_TRUE(root.OptionalByteSize("block_size", &block));
  root.Optional("threshold", &threshold);
  root.Problem("threshold", "must be <= health_window_size (8)");
  EXPECT_EQ(block, 4u << 20);
  Status s = file->Finish();
  EXPECT_THAT(s.message(), HasSubstr("n.yaml:1: lease: '10x' is not a duration"));
  EXPECT_THAT(s.message(), HasSubstr("n.yaml:3: threshold: must be <= health_window_size (8)"));
}

TEST(ConfigReaderTest, SyntaxErrorsCarryLineAndColumn) {
  auto file = ConfigFile::Parse("a: [1, 2\nb: 3\n", "bad.yaml");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidConfig);
  EXPECT_THAT(file.status().message(), HasSubstr("bad.yaml:"));
}

TEST(ConfigReaderTest, ListsOfSectionsNameTheirIndex) {
  auto file = ConfigFile::Parse("nodes:\n  - id: a\n  - 3\n  - id: c\n    extra: 1\n", "s.yaml");
  ConfigSection root = file->Root();
  auto nodes = root.SectionList("nodes");
  ASSERT_EQ(nodes.size(), 2u);
  for (auto& node : nodes) {
    std::string id;
    node.Required("id", &id);
    node.Done();
  }
  Status s = file->Finish();
  EXPECT_THAT(s.message(), HasSubstr("s.yaml:3: nodes[1]: expected a mapping, got a scalar"));
  EXPECT_THAT(s.message(), HasSubstr("s.yaml:5: nodes[2].extra: unknown key"));
}

TEST(ConfigReaderTest, DuplicateKeysAreRefusedNamingFileLineAndKey) {
  auto file = ConfigFile::Parse("timeout_ms: 30\nstore_health:\n  enabled: true\n  enabled: false\ntimeout_ms: 1\n",
                                "store.yaml");
  ASSERT_FALSE(file.ok()) << "a second timeout_ms must not be silently ignored";
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidConfig);
  EXPECT_THAT(file.status().message(), HasSubstr("store.yaml:4: store_health.enabled: duplicate key (first given on line 3)"));
  EXPECT_THAT(file.status().message(), HasSubstr("store.yaml:5: timeout_ms: duplicate key (first given on line 1)"));
}

TEST(ConfigReaderTest, InvalidUtf8IsRefusedNamingFileLineAndKey) {
  auto file = ConfigFile::Parse("storage_backends: \"/p\xFF" "0\"\n", "store.yaml");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            "store.yaml:1: storage_backends: the value is not valid UTF-8 (byte 0xFF at offset 2)");
}

TEST(ConfigReaderTest, AnAliasBombIsRefusedBeforeAnyReading) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  auto file = ConfigFile::Parse(text, "bomb.yaml");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("bomb.yaml:"));
  EXPECT_THAT(file.status().message(), HasSubstr("expands to more than 100000 nodes"));
}

TEST(ConfigReaderTest, DurationsPastWhatADurationHoldsAreRefused) {
  // 9223372036855 ms is one past the largest millisecond count a nanosecond Duration holds.
  auto file = ConfigFile::Parse("timeout_ms: 9223372036855\nok_ms: 30\ninterval_s: inf\nwait_s: 1e300\n"
                                "fine_s: 0.5\nnan_s: nan\n",
                                "store.yaml");
  ASSERT_TRUE(file.ok());
  ConfigSection root = file->Root();
  int64_t timeout_ms = 7;
  int64_t ok_ms = 0;
  double interval_s = 1, wait_s = 1, fine_s = 0;
  EXPECT_FALSE(root.OptionalMillis("timeout_ms", &timeout_ms));
  EXPECT_TRUE(root.OptionalMillis("ok_ms", &ok_ms));
  EXPECT_FALSE(root.OptionalSeconds("interval_s", &interval_s));
  EXPECT_FALSE(root.OptionalSeconds("wait_s", &wait_s));
  EXPECT_TRUE(root.OptionalSeconds("fine_s", &fine_s));
  EXPECT_FALSE(root.OptionalSeconds("nan_s", &wait_s));
  EXPECT_EQ(timeout_ms, 7) << "a refused value leaves the default";
  EXPECT_EQ(ok_ms, 30);
  EXPECT_EQ(fine_s, 0.5);
  Status s = file->Finish();
  EXPECT_THAT(s.message(), HasSubstr("store.yaml:1: timeout_ms: 9223372036855 ms is out of range (at most "));
  EXPECT_THAT(s.message(), HasSubstr("store.yaml:3: interval_s: inf s is out of range"));
  EXPECT_THAT(s.message(), HasSubstr("store.yaml:4: wait_s: 1e300 s is out of range"));
  EXPECT_THAT(s.message(), HasSubstr("store.yaml:6: nan_s: nan s is out of range"));
}

TEST(ConfigReaderTest, AFileLargerThanAnyConfigIsRefused) {
  auto file = ConfigFile::Load("/dev/zero");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("/dev/zero: larger than 4.00 MiB, too large for a config file"));
}

TEST(ConfigReaderTest, MissingFileIsAnError) {
  auto file = ConfigFile::Load("/nonexistent/kvchaos.yaml");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().ToString(), HasSubstr("/nonexistent/kvchaos.yaml"));
}

}  // namespace
}  // namespace kvchaos
