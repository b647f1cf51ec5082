// Fuzz target: everything that reads a Redis reply — the coordination backend's and the meta
// indexer's shape checks (core/election/redis_replies.h, core/meta/redis_meta_replies.h) — on
// every reply hiredis parses from the input (RESP bytes as a server would send them), read by a
// reader set up as the backends set up theirs.
#include <hiredis/hiredis.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/common/redis_reply_bound.h"
#include "core/election/redis_replies.h"
#include "core/meta/redis_meta_replies.h"
#include "fuzz/fuzz_check.h"

namespace {

namespace er = kvchaos::election::redis_replies;
namespace mr = kvchaos::meta::redis_meta_replies;

void ReadEverything(const redisReply* r) {
  (void)er::Text(r);
  (void)er::Token(r);
  (void)er::TryLock(r, "k");
  (void)er::HolderOnly(r, "RenewLock", "k", "h");
  (void)er::Holder(r, "k");
  (void)er::RaisedFloor(r, "k", "h", 7);
  (void)er::Done(r, "SET");
  (void)er::Value(r, "k");
  std::set<std::string> keys;
  (void)er::ScanPage(r, &keys);
  std::vector<kvchaos::election::KeyValue> values;
  (void)er::MgetValues(r, {"kv:a", "kv:b"}, 3, &values);
  auto primary = er::MasterAddress(r, "M");
  if (primary.ok()) FUZZ_CHECK(!primary->host.empty() && primary->port > 0 && primary->port <= 65535, "a bad primary address");
  FUZZ_CHECK(!er::RoleIsPrimary(r) || er::RoleName(r) == "master", "ROLE primary without 'master'");
  (void)mr::ScriptSha(r, "SCRIPT LOAD");
  kvchaos::Status error;
  const mr::ScriptOutcome outcome = mr::ScriptResult(r, "meta", 5, &error);
  FUZZ_CHECK(outcome != mr::ScriptOutcome::kFailed || !error.ok(), "a failed script without its error");
  auto record = mr::Record(r, "meta", "k");
  if (record.ok() && record->has_value()) FUZZ_CHECK(!(*record)->empty(), "an empty record that is not nullopt");
  std::vector<std::string> listed;
  auto cursor = mr::ScanPage(r, "meta", "p:", &listed);
  if (!cursor.ok()) FUZZ_CHECK(listed.empty(), "a refused SCAN page still listed keys");
  (void)mr::FenceToken(r, "meta");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  redisReader* reader = redisReaderCreate();
  kvchaos::BoundRedisReplies(reader);
  redisReaderFeed(reader, reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < 64; ++i) {
    void* reply = nullptr;
    if (redisReaderGetReply(reader, &reply) != REDIS_OK || reply == nullptr) break;
    ReadEverything(static_cast<redisReply*>(reply));
    freeReplyObject(reply);
  }
  redisReaderFree(reader);
  return 0;
}
