// CacheLocation JSON: round trip with checksum presence, and compatibility with records that
// predate checksums or come from upstream (0 = absent).
#include "core/meta/cache_location.h"

#include <gtest/gtest.h>

namespace kvchaos::meta {
namespace {

using nlohmann::json;
using integrity::ChecksumAlgo;

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
