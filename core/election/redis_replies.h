// How the Redis coordination backend reads its replies: every check of a reply's shape, as pure
// functions of a hiredis reply tree, apart from the connection handling. A reply of another shape
// (a proxy, another server version, a broken or hostile server) is Unavailable naming the call,
// and no element is read that the reply does not have. fuzz/redis_reply_fuzz.cc runs every one of
// them on whatever hiredis parses from arbitrary bytes.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/election/coordination_backend.h"

struct redisReply;

namespace kvchaos::election::redis_replies {

// The text of a string, status, error or integer reply; "" for the others (and null).
std::string Text(const redisReply* r);
// A fencing token sent as the counter's decimal string (an integer reply is accepted too); 0 when
// it is neither (never a granted token).
FencingToken Token(const redisReply* r);
// "<what>: redis answered: <text>".
Status Unexpected(std::string_view what, const redisReply* r);

// The trylock script: {1, token} granted, {0, holder} held by someone else (AlreadyExists).
Result<LockGrant> TryLock(const redisReply* r, std::string_view key);
// The renew and unlock scripts: 1 done, 0 not the holder (LockLost). `what`: "RenewLock".
Status HolderOnly(const redisReply* r, std::string_view what, std::string_view key, std::string_view holder);
// The holder script: {holder or '', pttl, token or '0'}.
Result<LockHolderInfo> Holder(const redisReply* r, std::string_view key);
// The raisefloor script: {1, token} with token > floor, {0} not the holder (LockLost).
Result<FencingToken> RaisedFloor(const redisReply* r, std::string_view key, std::string_view holder,
                                 FencingToken floor);
// SET / DEL: anything but an error reply.
Status Done(const redisReply* r, std::string_view what);
// GET: the value; NotFound for nil.
Result<std::string> Value(const redisReply* r, std::string_view key);
// One SCAN page: {cursor, [key, ...]}; the keys are added to *keys, the next cursor returned.
Result<std::string> ScanPage(const redisReply* r, std::set<std::string>* keys);
// MGET of `keys`: one entry per key; a key whose value is not a string (expired since SCAN) is
// skipped. Each key enters *out without its first `strip` characters.
Status MgetValues(const redisReply* r, const std::vector<std::string>& keys, size_t strip,
                  std::vector<KeyValue>* out);

// SENTINEL get-master-addr-by-name: {ip, port} -> "ip" and the port; NotFound for nil (the
// sentinel does not monitor `master`).
struct PrimaryAddress {
  std::string host;
  int port = 0;
};
Result<PrimaryAddress> MasterAddress(const redisReply* r, std::string_view master);
// ROLE: whether the server says it is a primary ("master").
bool RoleIsPrimary(const redisReply* r);
// ROLE's first element ("master", "slave", "sentinel"), or "?" when the reply has another shape.
std::string RoleName(const redisReply* r);

}  // namespace kvchaos::election::redis_replies
