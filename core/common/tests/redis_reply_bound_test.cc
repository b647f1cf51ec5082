// BoundRedisReplies: a reply header asking for more array elements than the bound is refused by
// the reader before anything is allocated; ordinary replies still parse.
#include "core/common/redis_reply_bound.h"

#include <hiredis/hiredis.h>

#include <gtest/gtest.h>

#include <string>

namespace kvchaos {
namespace {

// Whether a bounded reader takes `resp` as a reply.
bool Parses(const std::string& resp, bool bounded = true) {
  redisReader* reader = redisReaderCreate();
  if (bounded) BoundRedisReplies(reader);
  redisReaderFeed(reader, resp.data(), resp.size());
  void* reply = nullptr;
  const bool ok = redisReaderGetReply(reader, &reply) == REDIS_OK && reply != nullptr;
  if (reply != nullptr) freeReplyObject(reply);
  redisReaderFree(reader);
  return ok;
}

TEST(RedisReplyBoundTest, AnArrayHeaderPastTheBoundIsRefusedBeforeItIsAllocated) {
  // 13 bytes that asked hiredis 0.14 for 16 GB (fuzz/regressions/redis_reply/huge-array-header).
  EXPECT_FALSE(Parses("*2000000000\r\n")) << "the reader must refuse an array of 2e9 elements";
  EXPECT_FALSE(Parses("*" + std::to_string(kMaxRedisReplyElements + 1) + "\r\n"));
  EXPECT_TRUE(Parses("*2\r\n:1\r\n*1\r\n$1\r\nx\r\n")) << "ordinary (nested) arrays still parse";
  EXPECT_TRUE(Parses("$3\r\nabc\r\n"));
}

}  // namespace
}  // namespace kvchaos
