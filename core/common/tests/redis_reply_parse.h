// Tests of Redis reply checks: the first reply hiredis reads from raw RESP bytes with the bound the
// backends set (BoundRedisReplies), owned; null when the reader refuses the bytes.
#pragma once

#include <hiredis/hiredis.h>

#include <memory>
#include <string>

#include "core/common/redis_reply_bound.h"

namespace kvchaos::testing {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ParsedReply = std::unique_ptr<redisReply, ReplyFree>;

inline ParsedReply ParseReply(const std::string& resp) {
  redisReader* reader = redisReaderCreate();
  BoundRedisReplies(reader);
  redisReaderFeed(reader, resp.data(), resp.size());
  void* reply = nullptr;
  const int rc = redisReaderGetReply(reader, &reply);
  redisReaderFree(reader);
  return ParsedReply(rc == REDIS_OK ? static_cast<redisReply*>(reply) : nullptr);
}

}  // namespace kvchaos::testing
