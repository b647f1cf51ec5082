// BoundRedisReplies: the one bound on what hiredis builds from a server's reply, shared by every
// Redis client of the core (the coordination backend, the meta indexer). hiredis 0.14 allocates an
// array reply's element table from its header alone — "*2000000000\r\n" asks for 16 GB before a
// single element arrives — so a broken or hostile server could exhaust a node's memory with 13
// bytes. Past kMaxRedisReplyElements the reader fails instead ("Out of memory"), and the call fails
// as on a lost connection.
#pragma once

struct redisReader;

namespace kvchaos {

inline constexpr int kMaxRedisReplyElements = 1 << 20;

// Makes `reader` (a redisContext's, or one of its own) refuse arrays past kMaxRedisReplyElements.
void BoundRedisReplies(redisReader* reader);

}  // namespace kvchaos
