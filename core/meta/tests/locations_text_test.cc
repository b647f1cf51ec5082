// ParseLocationsText: the narrow reader takes exactly LocationsJson's text and answers what the
// JSON parser answers; everything else, including what the parser reads differently from how it
// is written, goes to the parser.
#include "core/meta/locations_text.h"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvchaos::meta {
namespace {

using integrity::ChecksumAlgo;

// What the JSON parser alone makes of `text`.
std::vector<CacheLocation> ParserAnswer(std::string_view text) {
  std::vector<CacheLocation> out;
  for (const nlohmann::json& j : nlohmann::json::parse(text)) out.push_back(*CacheLocation::FromJson(j, "test"));
  return out;
}

std::vector<CacheLocation> WrittenKinds() {
  std::vector<CacheLocation> all;
  for (const std::string& storage : {std::string("nfs"), std::string("caf\xC3\xA9")}) {
    for (const std::string& session : {std::string(), std::string("ws-3-17")}) {
      for (const int64_t checksum : {int64_t{-5}, INT64_MIN, INT64_MAX, int64_t{0}}) {
        for (const ChecksumAlgo algo : {ChecksumAlgo::kUnspecified, ChecksumAlgo::kCrc64Full, ChecksumAlgo::kCrc32XorInt64}) {
          CacheLocation loc{storage, "00ff", session.empty() ? LocationStatus::kServing : LocationStatus::kWriting, session};
          loc.checksum_present = algo != ChecksumAlgo::kUnspecified;
          loc.checksum = loc.checksum_present ? checksum : 0;
          loc.checksum_algo = algo;
          loc.inline_header_version = checksum == INT64_MAX ? 1 : 0;
          if (checksum == -5) loc.iov_layout = *IovLayout::FromSizes(std::vector<uint64_t>{4096, 4096, 100});
          all.push_back(loc);
        }
      }
    }
  }
  return all;
}

TEST(LocationsText, WrittenTextIsReadDirectlyAsTheParserReadsIt) {
  const std::vector<CacheLocation> kinds = WrittenKinds();
  for (const CacheLocation& loc : kinds) {
    const std::string text = LocationsJson(std::vector<CacheLocation>{loc});
    std::vector<CacheLocation> read;
    ASSERT_TRUE(ReadWrittenLocations(text, &read)) << "the narrow reader refused LocationsJson's own text " << text;
    EXPECT_EQ(read, ParserAnswer(text)) << "the narrow reader and the parser disagree on " << text;
    EXPECT_EQ(read, std::vector<CacheLocation>{loc}) << text;
  }
  const std::string all = LocationsJson(kinds);
  Result<std::vector<CacheLocation>> parsed = ParseLocationsText(all, "entry");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, kinds);
  std::vector<CacheLocation> none{CacheLocation{}};
  ASSERT_TRUE(ReadWrittenLocations("[]", &none));
  EXPECT_TRUE(none.empty()) << "an entry without locations reads as none";
}

// Texts the parser reads differently from how LocationsJson would write what it reads, or that
// LocationsJson never writes: the narrow reader must leave every one to the parser.
TEST(LocationsText, OtherTextsGoToTheParser) {
  const char* const texts[] = {
      // upstream's sentinel: a checksum without the flag is present, of crc32_xor_int64
      R"([{"checksum":7,"status":"serving","storage":"s","uri":"u"}])",
      // a flag saying absent over a non-zero value reads as 0
      R"([{"checksum":5,"checksum_present":false,"status":"serving","storage":"s","uri":"u"}])",
      // present without an algorithm: crc32_xor_int64, upstream's only one
      R"([{"checksum":5,"checksum_present":true,"status":"serving","storage":"s","uri":"u"}])",
      // no status: serving
      R"([{"checksum":0,"checksum_present":false,"storage":"s","uri":"u"}])",
      // escapes, whitespace, another key order, an unknown field, an unsigned past INT64_MAX
      R"([{"checksum":0,"checksum_present":false,"status":"serving","storage":"s\"t","uri":"u"}])",
      R"([ {"checksum":0,"checksum_present":false,"status":"serving","storage":"s","uri":"u"} ])",
      R"([{"uri":"u","storage":"s","status":"serving","checksum_present":false,"checksum":0}])",
      R"([{"checksum":0,"checksum_present":false,"status":"serving","storage":"s","uri":"u","zone":1}])",
      R"([{"checksum":18446744073709551615,"checksum_algo":"crc64_full","checksum_present":true,"status":"serving","storage":"s","uri":"u"}])",
      // an empty session and a zero header version are written as no field at all
      R"([{"checksum":0,"checksum_present":false,"status":"writing","storage":"s","uri":"u","write_session":""}])",
      R"([{"checksum":0,"checksum_present":false,"inline_header_version":0,"status":"serving","storage":"s","uri":"u"}])",
      // runs that merge, as FromRuns merges them
      R"([{"checksum":0,"checksum_present":false,"iov_layout":[[1,4096],[2,4096]],"status":"serving","storage":"s","uri":"u"}])",
  };
  for (const char* text : texts) {
    std::vector<CacheLocation> read;
    EXPECT_FALSE(ReadWrittenLocations(text, &read)) << "the narrow reader took a text it must leave to the parser: " << text;
    Result<std::vector<CacheLocation>> parsed = ParseLocationsText(text, "entry");
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, ParserAnswer(text)) << "ParseLocationsText answered otherwise than the parser for " << text;
  }
}

TEST(LocationsText, BadTextIsRefusedNamingTheEntryAndField) {
  Result<std::vector<CacheLocation>> parsed = ParseLocationsText("{\"storage\":\"s\"}", "cache entry 'k'");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "cache entry 'k': 'locations' is not a JSON array");
  parsed = ParseLocationsText(R"([{"storage":"s","uri":"u","status":"lost"}])", "cache entry 'k'");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("cache entry 'k'.locations[0].status: unknown status 'lost'"), std::string::npos)
      << parsed.status().message();
  parsed = ParseLocationsText("[{\"checksum\":1,", "cache entry 'k'");
  EXPECT_FALSE(parsed.ok()) << "a cut entry must not read as locations";
}

}  // namespace
}  // namespace kvchaos::meta
