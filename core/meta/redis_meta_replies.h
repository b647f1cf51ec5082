// How RedisMetaIndexer reads its replies: the shape checks of every reply (script loads, write
// scripts, HGETALL records, SCAN pages, the fence key), as pure functions of a hiredis reply tree,
// apart from the connection handling. A reply of another shape (a broken or hostile server, a
// proxy) is Unavailable naming the call; no element is read that the reply does not have, no
// string is built from a missing one, no key is cut shorter than it is. fuzz/redis_reply_fuzz.cc
// runs them on whatever hiredis parses from arbitrary bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/meta/meta_indexer.h"

struct redisReply;

namespace kvchaos::meta::redis_meta_replies {

// SCRIPT LOAD: the script's SHA (a string reply), else Unavailable naming `what`.
Result<std::string> ScriptSha(const redisReply* r, std::string_view what);
// A write script's reply: OK (anything but an error), kRetry for NOSCRIPT (the script cache was
// lost: load and run again), or the error: StaleFencingToken with the newest token the server
// names, Conflict for a conditional write that found another write id, Unavailable for any other.
enum class ScriptOutcome { kDone, kRetry, kFailed };
ScriptOutcome ScriptResult(const redisReply* r, const std::string& where, uint64_t fencing_token, Status* error);
// HGETALL: nullopt for no fields, else the record (field/value pairs of string replies).
Result<std::optional<MetaRecord>> Record(const redisReply* r, const std::string& where, std::string_view key);
// One SCAN page: {cursor, [key, ...]}; each key, without its first `strip` characters (keys that
// do not start with `prefix` are not ours and skipped), is added to *keys. The next cursor.
Result<std::string> ScanPage(const redisReply* r, const std::string& where, std::string_view prefix,
                             std::vector<std::string>* keys);
// GET of the fence key: 0 for nil, else its decimal number.
Result<uint64_t> FenceToken(const redisReply* r, const std::string& where);

}  // namespace kvchaos::meta::redis_meta_replies
