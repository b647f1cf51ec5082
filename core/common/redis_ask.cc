// One Redis command on a connection of its own; see redis_ask.h.
#include "core/common/redis_ask.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include "core/common/redis_reply_bound.h"

namespace kvchaos {

void RedisReplyFree::operator()(redisReply* r) const { freeReplyObject(r); }

RedisReply RedisAsk(int port, const std::vector<std::string>& argv, int64_t timeout_ms) {
  const timeval timeout{static_cast<time_t>(timeout_ms / 1000), static_cast<suseconds_t>(timeout_ms % 1000 * 1000)};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port, timeout);
  if (c == nullptr) return nullptr;
  RedisReply reply;
  if (c->err == 0 && redisSetTimeout(c, timeout) == REDIS_OK) {
    BoundRedisReplies(c->reader);
    std::vector<const char*> args;
    std::vector<size_t> lens;
    for (const std::string& a : argv) {
      args.push_back(a.c_str());
      lens.push_back(a.size());
    }
    reply.reset(static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(args.size()), args.data(), lens.data())));
  }
  redisFree(c);
  return reply;
}

size_t RedisArrayElements(const redisReply* r) { return r != nullptr && r->type == REDIS_REPLY_ARRAY ? r->elements : 0; }

std::string RedisReplyText(const redisReply* r) {
  return r != nullptr && r->str != nullptr ? std::string(r->str, r->len) : std::string();
}

}  // namespace kvchaos
