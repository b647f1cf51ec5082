#include "core/common/status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace kvchaos {
namespace {

TEST(StatusTest, OkIsDefaultAndPrintsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, CodesKeepTheirStableNumbersAndNames) {
  // Results files and the HTTP API carry these numbers: changing one breaks old results.
  EXPECT_EQ(static_cast<int>(StatusCode::kNotFound), 1);
  EXPECT_EQ(static_cast<int>(StatusCode::kIoError), 2);
  EXPECT_EQ(static_cast<int>(StatusCode::kTimeout), 3);
  EXPECT_EQ(static_cast<int>(StatusCode::kStoreUnhealthy), 4);
  EXPECT_EQ(static_cast<int>(StatusCode::kInvalidConfig), 5);
  EXPECT_EQ(static_cast<int>(StatusCode::kChecksumMismatch), 6);
  EXPECT_EQ(static_cast<int>(StatusCode::kNotLeader), 9);
  EXPECT_EQ(static_cast<int>(StatusCode::kStaleFencingToken), 14);
  EXPECT_EQ(static_cast<int>(StatusCode::kUnauthenticated), 17);
  EXPECT_EQ(static_cast<int>(StatusCode::kCorruption), 18);
  EXPECT_EQ(static_cast<int>(StatusCode::kConflict), 19);
  EXPECT_EQ(StatusCodeName(StatusCode::kStoreUnhealthy), "StoreUnhealthy");
  EXPECT_EQ(StatusCodeName(static_cast<StatusCode>(999)), "Unknown(999)");
}

TEST(StatusTest, EveryNameParsesBackToItsCode) {
  for (int n = 0; n <= static_cast<int>(StatusCode::kConflict); ++n) {
    const auto code = static_cast<StatusCode>(n);
    StatusCode parsed{};
    ASSERT_TRUE(StatusCodeFromName(StatusCodeName(code), &parsed)) << "code " << n << " has no parsable name";
    EXPECT_EQ(parsed, code);
  }
  StatusCode parsed{};
  EXPECT_FALSE(StatusCodeFromName("NoSuchCode", &parsed));
}

TEST(StatusTest, ToStringCarriesErrnoText) {
  Status s = Status::IoError("backend '/mnt/p1': write('/mnt/p1/0a3/x.tmp') failed", EIO);
  EXPECT_EQ(s.ToString(),
            "IoError: backend '/mnt/p1': write('/mnt/p1/0a3/x.tmp') failed: errno=5 (Input/output error)");
  EXPECT_EQ(s.sys_errno(), EIO);
}

TEST(StatusTest, WithContextKeepsCodeAndErrno) {
  Status s = Status::IoError("open failed", ENOENT).WithContext("backend '/p0'");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.sys_errno(), ENOENT);
  EXPECT_EQ(s.message(), "backend '/p0': open failed");
  EXPECT_TRUE(Status::Ok().WithContext("ignored").ok());
}

Status FailsWhen(bool fail) {
  KVCHAOS_RETURN_IF_ERROR(fail ? Status::Timeout("slow") : Status::Ok());
  return Status::NotFound("reached the end");
}

TEST(StatusTest, ReturnIfErrorStopsAtTheFirstError) {
  EXPECT_EQ(FailsWhen(true).code(), StatusCode::kTimeout);
  EXPECT_EQ(FailsWhen(false).code(), StatusCode::kNotFound);
}

TEST(ResultTest, HoldsValueOrStatus) {
  Result<int> good = 42;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  Result<int> bad = Status::InvalidArgument("no");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kvchaos
