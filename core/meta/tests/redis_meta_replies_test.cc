// The meta indexer's reply checks on replies a real server would never send. Before they were
// factored out, a SCRIPT LOAD answered with an integer built a std::string from a null pointer, and
// a SCAN key shorter than the indexer's prefix threw out of ListKeys (terminating a leader's
// recovery); a HGETALL with a non-string field read a null pointer.
#include "core/meta/redis_meta_replies.h"

#include <hiredis/hiredis.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/common/tests/redis_reply_parse.h"

namespace kvchaos::meta {
namespace {

using testing::ParseReply;

TEST(RedisMetaRepliesTest, WellFormedRepliesAreRead) {
  auto sha = redis_meta_replies::ScriptSha(ParseReply("$3\r\nabc\r\n").get(), "SCRIPT LOAD");
  ASSERT_TRUE(sha.ok());
  EXPECT_EQ(*sha, "abc");
  auto record = redis_meta_replies::Record(ParseReply("*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n").get(), "m", "k");
  ASSERT_TRUE(record.ok() && record->has_value());
  EXPECT_EQ((**record).at("b"), "2");
  std::vector<std::string> keys;
  auto cursor = redis_meta_replies::ScanPage(ParseReply("*2\r\n$1\r\n0\r\n*2\r\n$3\r\np:a\r\n$3\r\np:b\r\n").get(), "m", "p:", &keys);
  ASSERT_TRUE(cursor.ok());
  EXPECT_EQ(*cursor, "0");
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b"}));
  auto fence = redis_meta_replies::FenceToken(ParseReply("$2\r\n17\r\n").get(), "m");
  ASSERT_TRUE(fence.ok());
  EXPECT_EQ(*fence, 17u);
  Status error;
  EXPECT_EQ(redis_meta_replies::ScriptResult(ParseReply("-NOSCRIPT no\r\n").get(), "m", 5, &error),
            redis_meta_replies::ScriptOutcome::kRetry);
  EXPECT_EQ(redis_meta_replies::ScriptResult(ParseReply("-ERR STALE_FENCING_TOKEN 12\r\n").get(), "m", 5, &error),
            redis_meta_replies::ScriptOutcome::kFailed);
  EXPECT_EQ(error.code(), StatusCode::kStaleFencingToken) << error.ToString();
}

TEST(RedisMetaRepliesTest, BrokenRepliesAreUnavailableInsteadOfCrashing) {
  EXPECT_EQ(redis_meta_replies::ScriptSha(ParseReply(":1\r\n").get(), "SCRIPT LOAD").status().code(), StatusCode::kUnavailable)
      << "an integer where the SHA belongs";
  EXPECT_FALSE(redis_meta_replies::Record(ParseReply("*2\r\n:1\r\n$1\r\nv\r\n").get(), "m", "k").ok()) << "an integer field";
  EXPECT_FALSE(redis_meta_replies::Record(ParseReply("*3\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n").get(), "m", "k").ok())
      << "a field without its value";
  std::vector<std::string> keys;
  auto page = redis_meta_replies::ScanPage(ParseReply("*2\r\n$1\r\n0\r\n*2\r\n$1\r\nx\r\n$3\r\np:a\r\n").get(), "m", "p:", &keys);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(keys, std::vector<std::string>{"a"}) << "a key shorter than the prefix must be skipped, not cut";
  EXPECT_FALSE(redis_meta_replies::ScanPage(ParseReply("*2\r\n*0\r\n*0\r\n").get(), "m", "p:", &keys).ok())
      << "a cursor that is not a string";
  EXPECT_FALSE(redis_meta_replies::FenceToken(ParseReply(":17\r\n").get(), "m").ok());
  EXPECT_FALSE(redis_meta_replies::FenceToken(ParseReply("$3\r\n1x7\r\n").get(), "m").ok());
}

}  // namespace
}  // namespace kvchaos::meta
