// The bounded hiredis reply builders (see redis_reply_bound.h).
#include "core/common/redis_reply_bound.h"

#include <hiredis/hiredis.h>

namespace kvchaos {
namespace {

// hiredis's own builders (static in hiredis.c), read from a reader it made.
const redisReplyObjectFunctions& HiredisFunctions() {
  static const redisReplyObjectFunctions functions = [] {
    redisReader* reader = redisReaderCreate();
    const redisReplyObjectFunctions copy = *reader->fn;
    redisReaderFree(reader);
    return copy;
  }();
  return functions;
}

void* CreateBoundedArray(const redisReadTask* task, int elements) {
  if (elements > kMaxRedisReplyElements) return nullptr;  // the reader reports "Out of memory"
  return HiredisFunctions().createArray(task, elements);
}

}  // namespace

void BoundRedisReplies(redisReader* reader) {
  static redisReplyObjectFunctions bounded = [] {
    redisReplyObjectFunctions f = HiredisFunctions();
    f.createArray = CreateBoundedArray;
    return f;
  }();
  reader->fn = &bounded;
}

}  // namespace kvchaos
