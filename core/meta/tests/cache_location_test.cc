// CacheLocation JSON: round trip with checksum presence and IOV layout, and compatibility with
// records that predate checksums or layouts or come from upstream (0 = absent).
#include "core/meta/cache_location.h"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

#include "core/common/json_text.h"

namespace kvchaos::meta {
namespace {

using nlohmann::json;
using integrity::ChecksumAlgo;

// The index entry's text is written directly (LocationsJson): it must stay, byte for byte, what
// dumping ToJson gave, for every combination of optional fields and any string.
TEST(CacheLocation, DirectTextIsTheDumpOfToJson) {
  std::vector<CacheLocation> all;
  for (const std::string& storage : {std::string("nfs"), std::string("n\"f\\s\x01"), std::string("caf\xC3\xA9\xFF")}) {
    for (const std::string& session : {std::string(), std::string("ws-3-17")}) {
      for (const int64_t checksum : {int64_t{0}, int64_t{-5}, INT64_MIN, INT64_MAX}) {
        for (const bool present : {false, true}) {
          for (const int64_t header : {int64_t{0}, int64_t{1}}) {
            CacheLocation loc{storage,  "00ff",  present ? LocationStatus::kServing : LocationStatus::kWriting,
                              session,  checksum, present, present ? ChecksumAlgo::kCrc64Full : ChecksumAlgo::kUnspecified};
            loc.inline_header_version = header;
            if (header != 0) loc.iov_layout = *IovLayout::FromSizes(std::vector<uint64_t>{4096, 4096, 100});
            all.push_back(loc);
          }
        }
      }
    }
  }
  for (const CacheLocation& loc : all) {
    std::string text;
    loc.AppendJson(&text);
    EXPECT_EQ(text, DumpJson(loc.ToJson())) << "AppendJson differs from DumpJson(ToJson())";
  }
  json array = json::array();
  for (const CacheLocation& loc : all) array.push_back(loc.ToJson());
  EXPECT_EQ(LocationsJson(all), DumpJson(array)) << "LocationsJson differs from the dump of the array of ToJson";
  EXPECT_EQ(LocationsJson({}), "[]");
}

TEST(CacheLocation, RoundTripsWithAChecksumOfZero) {
  CacheLocation loc{"nfs", "00ff", LocationStatus::kServing, "", 0, true, ChecksumAlgo::kCrc64Full};
  Result<CacheLocation> back = CacheLocation::FromJson(loc.ToJson(), "loc");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, loc) << "0 with the presence flag set is a real checksum";
  EXPECT_TRUE(back->checksum_present);
}

TEST(CacheLocation, RoundTripsWritingLocationsWithoutChecksum) {
  CacheLocation loc{"nfs", "abc", LocationStatus::kWriting, "ws-1", 0, false, ChecksumAlgo::kUnspecified};
  Result<CacheLocation> back = CacheLocation::FromJson(loc.ToJson(), "loc");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, loc);
}

TEST(CacheLocation, OldRecordsWithoutChecksumFieldsReadAsAbsent) {
  Result<CacheLocation> r = CacheLocation::FromJson(json{{"storage", "nfs"}, {"uri", "x"}}, "loc");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->checksum_present);
  EXPECT_EQ(r->status, LocationStatus::kServing);
}

TEST(CacheLocation, UpstreamZeroSentinelIsAbsentAndNonZeroIsCrc32XorInt64) {
  Result<CacheLocation> zero = CacheLocation::FromJson(json{{"storage", "s"}, {"uri", "x"}, {"checksum", 0}}, "loc");
  ASSERT_TRUE(zero.ok());
  EXPECT_FALSE(zero->checksum_present);
  Result<CacheLocation> set =
      CacheLocation::FromJson(json{{"storage", "s"}, {"uri", "x"}, {"checksum", -7046029253055495966LL}}, "loc");
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->checksum_present);
  EXPECT_EQ(set->checksum, -7046029253055495966LL);
  EXPECT_EQ(set->checksum_algo, ChecksumAlgo::kCrc32XorInt64);
}

TEST(CacheLocation, RoundTripsItsIovLayoutAsRuns) {
  CacheLocation loc{"nfs", "00ff", LocationStatus::kServing, "", 9, true, ChecksumAlgo::kCrc32XorInt64};
  loc.iov_layout = *IovLayout::FromSizes(std::vector<uint64_t>(64, 65536));
  const json j = loc.ToJson();
  EXPECT_EQ(j.at("iov_layout"), json::parse("[[64, 65536]]")) << j.dump();
  Result<CacheLocation> back = CacheLocation::FromJson(json::parse(j.dump()), "loc");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, loc);
}

TEST(CacheLocation, OldRecordsWithoutLayoutReadAsUnknownAndWriteNoField) {
  // A record from before layouts were stored.
  Result<CacheLocation> old = CacheLocation::FromJson(
      json{{"storage", "nfs"}, {"uri", "x"}, {"checksum", 5}, {"checksum_present", true}}, "loc");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_FALSE(old->iov_layout.known());
  EXPECT_EQ(old->iov_layout.ToString(), "unknown");
  // Written back, it stays what an older reader expects: no iov_layout field at all.
  EXPECT_FALSE(old->ToJson().contains("iov_layout")) << old->ToJson().dump();
}

// The inline header flag (docs/inline-header.md): stored when set, absent (0) on older records,
// which then read without a header; a value that cannot be a version is refused naming the field.
TEST(CacheLocation, InlineHeaderVersionRoundTripsAndOldRecordsHaveNone) {
  CacheLocation loc{"nfs", "00ff", LocationStatus::kServing, "", 9, true, ChecksumAlgo::kCrc64Full};
  loc.inline_header_version = 1;
  const json j = loc.ToJson();
  EXPECT_EQ(j.at("inline_header_version"), 1) << j.dump();
  Result<CacheLocation> back = CacheLocation::FromJson(json::parse(j.dump()), "loc");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, loc);

  Result<CacheLocation> old = CacheLocation::FromJson(json{{"storage", "nfs"}, {"uri", "x"}}, "loc");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->inline_header_version, 0);
  EXPECT_FALSE(old->ToJson().contains("inline_header_version")) << "records without headers stay as they were";

  for (const json& bad : {json("1"), json(-1), json(1.5)}) {
    Result<CacheLocation> r =
        CacheLocation::FromJson(json{{"storage", "s"}, {"uri", "x"}, {"inline_header_version", bad}}, "loc");
    ASSERT_FALSE(r.ok()) << bad.dump();
    EXPECT_NE(r.status().message().find("loc.inline_header_version"), std::string::npos) << r.status().ToString();
  }
}

TEST(CacheLocation, SplitRunsOfOneSizeReadAsOneRun) {
  Result<CacheLocation> r = CacheLocation::FromJson(
      json{{"storage", "s"}, {"uri", "x"}, {"iov_layout", json::parse("[[2, 4096], [3, 4096], [1, 100]]")}}, "loc");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->iov_layout.ToJson(), json::parse("[[5, 4096], [1, 100]]"));
  EXPECT_EQ(r->iov_layout.total_bytes(), 5u * 4096 + 100);
}

TEST(CacheLocation, BadLayoutsAreRejectedNamingTheField) {
  struct Case {
    const char* layout;
    std::string where;
  } cases[] = {
      {"\"64x65536\"", "loc.iov_layout: expected an array"},
      {"[]", "loc.iov_layout: no IOVs"},
      {"[[64]]", "loc.iov_layout[0]: expected a [count, size] pair"},
      {"[[1, 2, 3]]", "loc.iov_layout[0]: expected a [count, size] pair"},
      {"[[0, 4096]]", "loc.iov_layout[0]: count 0"},
      {"[[4, 4096], [2, 0]]", "loc.iov_layout[1]: IOV size 0"},
      {"[[-1, 4096]]", "loc.iov_layout[0][0]: expected a non-negative integer count"},
      {"[[1, 1.5]]", "loc.iov_layout[0][1]: expected a non-negative integer size"},
      {"[[4, 4611686018427387904]]", "loc.iov_layout[0]: 4 x 4611686018427387904 bytes overflows"},
      {"[[1, 18446744073709551615], [1, 1]]", "loc.iov_layout[1]: 1 x 1 bytes overflows"},
      {"[[18446744073709551615, 1]]", "loc.iov_layout[0]: more than 1048576 IOVs"},
      {"[[1048576, 1], [1, 1]]", "loc.iov_layout[1]: more than 1048576 IOVs"},
  };
  for (const Case& c : cases) {
    json j{{"storage", "s"}, {"uri", "x"}, {"iov_layout", json::parse(c.layout)}};
    Result<CacheLocation> r = CacheLocation::FromJson(j, "loc");
    ASSERT_FALSE(r.ok()) << c.layout << " must be rejected";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.where), std::string::npos)
        << c.layout << ": message should contain '" << c.where << "': " << r.status().ToString();
  }
}

TEST(CacheLocation, BadFieldsAreNamed) {
  struct Case {
    json j;
    std::string field;
  } cases[] = {
      {json{{"uri", "x"}}, "loc.storage"},
      {json{{"storage", 1}, {"uri", "x"}}, "loc.storage"},
      {json{{"storage", "s"}, {"uri", "x"}, {"checksum", "12"}}, "loc.checksum"},
      {json{{"storage", "s"}, {"uri", "x"}, {"checksum_present", 1}}, "loc.checksum_present"},
      {json{{"storage", "s"}, {"uri", "x"}, {"status", "gone"}}, "loc.status"},
      {json{{"storage", "s"}, {"uri", "x"}, {"checksum_algo", "md5"}}, "loc.checksum_algo"},
  };
  for (const Case& c : cases) {
    Result<CacheLocation> r = CacheLocation::FromJson(c.j, "loc");
    ASSERT_FALSE(r.ok()) << c.j.dump();
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status().ToString();
  }
}

}  // namespace
}  // namespace kvchaos::meta
