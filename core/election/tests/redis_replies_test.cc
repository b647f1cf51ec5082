// The coordination backend's reply checks on replies a real server would never send: each is
// refused naming the call, and nothing is read that is not there.
#include "core/election/redis_replies.h"

#include "core/common/tests/redis_reply_parse.h"

#include <hiredis/hiredis.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace kvchaos::election {
namespace {

using testing::ParseReply;

TEST(RedisRepliesTest, TheScriptsRepliesAreRead) {
  auto granted = redis_replies::TryLock(ParseReply("*2\r\n:1\r\n$2\r\n42\r\n").get(), "k");
  ASSERT_TRUE(granted.ok()) << granted.status().ToString();
  EXPECT_EQ(granted->token, 42u);
  auto held = redis_replies::TryLock(ParseReply("*2\r\n:0\r\n$6\r\nnode-b\r\n").get(), "k");
  EXPECT_EQ(held.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(held.status().message().find("'node-b'"), std::string::npos);
  EXPECT_EQ(redis_replies::HolderOnly(ParseReply(":0\r\n").get(), "RenewLock", "k", "me").code(), StatusCode::kLockLost);
  auto floor = redis_replies::RaisedFloor(ParseReply("*2\r\n:1\r\n$2\r\n43\r\n").get(), "k", "me", 42);
  ASSERT_TRUE(floor.ok());
  EXPECT_EQ(*floor, 43u);
}

TEST(RedisRepliesTest, RepliesOfAnotherShapeAreUnavailableNamingTheCall) {
  for (const char* resp : {"*1\r\n:1\r\n", "*2\r\n$1\r\n1\r\n$1\r\n7\r\n", "*2\r\n:1\r\n*0\r\n", "+OK\r\n", "$-1\r\n",
                           "*-1\r\n", "-ERR boom\r\n"}) {
    auto r = redis_replies::TryLock(ParseReply(resp).get(), "k");
    ASSERT_FALSE(r.ok()) << resp;
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << resp;
    EXPECT_NE(r.status().message().find("TryLock('k')"), std::string::npos) << r.status().message();
  }
  std::set<std::string> keys;
  EXPECT_FALSE(redis_replies::ScanPage(ParseReply("*2\r\n$1\r\n0\r\n$3\r\nabc\r\n").get(), &keys).ok())
      << "a SCAN page whose key list is not an array";
  std::vector<KeyValue> values;
  EXPECT_FALSE(redis_replies::MgetValues(ParseReply("*1\r\n$1\r\nv\r\n").get(), {"kv:a", "kv:b"}, 3, &values).ok())
      << "an MGET answer with fewer entries than keys";
  EXPECT_FALSE(redis_replies::Holder(nullptr, "k").ok()) << "no reply at all";
}

TEST(RedisRepliesTest, SentinelAndRoleRepliesAreRead) {
  auto primary = redis_replies::MasterAddress(ParseReply("*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6380\r\n").get(), "M");
  ASSERT_TRUE(primary.ok()) << primary.status().ToString();
  EXPECT_EQ(primary->host, "127.0.0.1");
  EXPECT_EQ(primary->port, 6380);
  auto unknown = redis_replies::MasterAddress(ParseReply("*-1\r\n").get(), "M");
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound) << unknown.status().ToString();
  EXPECT_NE(unknown.status().message().find("no master named 'M'"), std::string::npos) << unknown.status().message();
  for (const char* resp : {"*2\r\n$1\r\nh\r\n$1\r\nx\r\n", "*2\r\n$1\r\nh\r\n$5\r\n70000\r\n",
                           "*1\r\n$1\r\nh\r\n", "*2\r\n$0\r\n\r\n$2\r\n10\r\n", "*2\r\n:1\r\n:2\r\n", "-ERR no\r\n"}) {
    auto r = redis_replies::MasterAddress(ParseReply(resp).get(), "M");
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << resp;
    EXPECT_NE(r.status().message().find("get-master-addr-by-name M"), std::string::npos) << r.status().message();
  }
  EXPECT_TRUE(redis_replies::RoleIsPrimary(ParseReply("*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n").get()));
  EXPECT_FALSE(redis_replies::RoleIsPrimary(ParseReply("*1\r\n$5\r\nslave\r\n").get()));
  EXPECT_EQ(redis_replies::RoleName(ParseReply("*1\r\n$5\r\nslave\r\n").get()), "slave");
  EXPECT_EQ(redis_replies::RoleName(ParseReply("*0\r\n").get()), "?");
  EXPECT_EQ(redis_replies::RoleName(ParseReply("+OK\r\n").get()), "?");
}

TEST(RedisRepliesTest, AHugePttlIsClampedInsteadOfOverflowingTheDuration) {
  auto info = redis_replies::Holder(ParseReply("*3\r\n$1\r\nh\r\n:9223372036854775807\r\n$1\r\n5\r\n").get(), "k");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_GT(info->remaining_ttl, Duration::zero()) << "the PTTL wrapped into a negative duration";
  EXPECT_EQ(info->token, 5u);
}

}  // namespace
}  // namespace kvchaos::election
