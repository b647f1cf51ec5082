// RedisAsk: one command to a Redis server or sentinel on 127.0.0.1, on a connection of its own,
// for the callers that look at a server's state now and then rather than keep a session: the
// real-mode sentinel setup of the harness and the sentinel cluster the tests start. The reply is
// bounded as every Redis reply of the core is (BoundRedisReplies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct redisReply;

namespace kvchaos {

struct RedisReplyFree {
  void operator()(redisReply* r) const;
};
using RedisReply = std::unique_ptr<redisReply, RedisReplyFree>;

// The reply to `argv` from 127.0.0.1:port; nullptr when the server cannot be reached or does not
// answer within timeout_ms (to connect, and again to reply).
RedisReply RedisAsk(int port, const std::vector<std::string>& argv, int64_t timeout_ms = 500);

// The elements of an array reply (0 for any other reply, or none).
size_t RedisArrayElements(const redisReply* r);

// A reply's string (empty for one without a string, or none).
std::string RedisReplyText(const redisReply* r);

}  // namespace kvchaos
