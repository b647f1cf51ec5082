// Shape checks of RedisMetaIndexer's replies (see redis_meta_replies.h).
#include "core/meta/redis_meta_replies.h"

#include <hiredis/hiredis.h>

#include <charconv>

#include "core/meta/fence.h"

namespace kvchaos::meta::redis_meta_replies {
namespace {

const redisReply* At(const redisReply* r, size_t i) {
  return r != nullptr && r->type == REDIS_REPLY_ARRAY && i < r->elements && r->element != nullptr ? r->element[i]
                                                                                                 : nullptr;
}

// The bytes of a string-like reply; nullopt for the others (integers, nil, arrays, null).
std::optional<std::string_view> Bytes(const redisReply* r) {
  if (r == nullptr || r->str == nullptr) return std::nullopt;
  if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS && r->type != REDIS_REPLY_ERROR) {
    return std::nullopt;
  }
  return std::string_view(r->str, r->len);
}

std::string TypeOf(const redisReply* r) { return r == nullptr ? "none" : "type " + std::to_string(r->type); }

}  // namespace

Result<std::string> ScriptSha(const redisReply* r, std::string_view what) {
  const std::optional<std::string_view> text = Bytes(r);
  if (r == nullptr || r->type != REDIS_REPLY_STRING || !text) {
    return Status::Unavailable(std::string(what) + " failed: " + (text ? std::string(*text) : TypeOf(r)));
  }
  return std::string(*text);
}

ScriptOutcome ScriptResult(const redisReply* r, const std::string& where, uint64_t fencing_token, Status* error) {
  if (r == nullptr) {
    *error = Status::Unavailable(where + ": no reply to a script");
    return ScriptOutcome::kFailed;
  }
  if (r->type != REDIS_REPLY_ERROR) return ScriptOutcome::kDone;
  const std::string err(Bytes(r).value_or(""));
  if (err.starts_with("NOSCRIPT")) return ScriptOutcome::kRetry;
  if (err.find("STALE_FENCING_TOKEN") != std::string::npos) {
    uint64_t newest = 0;
    const size_t space = err.rfind(' ');
    const std::string_view digits = std::string_view(err).substr(space == std::string::npos ? 0 : space + 1);
    std::from_chars(digits.data(), digits.data() + digits.size(), newest);
    *error = StaleFencingToken(where, fencing_token, newest);
    return ScriptOutcome::kFailed;
  }
  if (err.starts_with("CONFLICT ")) {
    *error = Status(StatusCode::kConflict, where + ": record " + err.substr(9) + "; read it again");
    return ScriptOutcome::kFailed;
  }
  *error = Status::Unavailable(where + ": script failed: " + err);
  return ScriptOutcome::kFailed;
}

Result<std::optional<MetaRecord>> Record(const redisReply* r, const std::string& where, std::string_view key) {
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY) {
    return Status::Unavailable(where + ": HGETALL '" + std::string(key) + "' answered " + TypeOf(r));
  }
  if (r->elements == 0) return std::optional<MetaRecord>();
  if (r->elements % 2 != 0) {
    return Status::Unavailable(where + ": HGETALL '" + std::string(key) + "' answered " + std::to_string(r->elements) +
                               " elements (not field/value pairs)");
  }
  MetaRecord record;
  for (size_t e = 0; e + 1 < r->elements; e += 2) {
    const std::optional<std::string_view> field = Bytes(At(r, e));
    const std::optional<std::string_view> value = Bytes(At(r, e + 1));
    if (!field || !value) {
      return Status::Unavailable(where + ": HGETALL '" + std::string(key) + "' answered a field or value that is not "
                                                                            "a string");
    }
    record[std::string(*field)] = std::string(*value);
  }
  return std::optional<MetaRecord>(std::move(record));
}

Result<std::string> ScanPage(const redisReply* r, const std::string& where, std::string_view prefix,
                             std::vector<std::string>* keys) {
  const std::optional<std::string_view> cursor = Bytes(At(r, 0));
  const redisReply* batch = At(r, 1);
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !cursor || batch == nullptr ||
      batch->type != REDIS_REPLY_ARRAY) {
    return Status::Unavailable(where + ": unexpected SCAN reply");
  }
  for (size_t i = 0; i < batch->elements; ++i) {
    const std::optional<std::string_view> k = Bytes(At(batch, i));
    if (!k || !k->starts_with(prefix)) continue;  // SCAN MATCH only returns ours; anything else is not
    keys->push_back(std::string(k->substr(prefix.size())));
  }
  return std::string(*cursor);
}

Result<uint64_t> FenceToken(const redisReply* r, const std::string& where) {
  if (r != nullptr && r->type == REDIS_REPLY_NIL) return uint64_t{0};
  const std::optional<std::string_view> text = Bytes(r);
  uint64_t token = 0;
  if (r == nullptr || r->type != REDIS_REPLY_STRING || !text) {
    return Status::Unavailable(where + ": fencing key holds no number");
  }
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), token);
  if (ec != std::errc() || end != text->data() + text->size()) {
    return Status::Unavailable(where + ": fencing key holds no number");
  }
  return token;
}

}  // namespace kvchaos::meta::redis_meta_replies
