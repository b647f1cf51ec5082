// CoordinationBackend: the shared store under leader election — a leased lock per key (with a
// fencing token) and a small key/value space for node endpoints and heartbeats. Implementations:
// memory (one process), file (processes on one host), Redis and etcd (production); the simulator (sim/)
// adds a simulated Redis behind this same interface and runs the LeaderElector on virtual time.
//
// Rules every implementation follows, so the elector can be written once:
//  - What goes to the server is a duration (`lease`, `ttl`), never an absolute time: the server's
//    clock and the caller's clock are different clocks.
//  - The one point in time is a lock call's `deadline`, and it never leaves the process: it is on
//    the clock of the kvchaos::Runtime the backend was built with (the caller's own), and it says
//    when the caller has no use for the answer any more. The call returns by then (kTimeout when
//    nothing answered): each attempt waits at most until the deadline, and no attempt or retry
//    starts after it, whatever the backend's own timeout and retry count would allow. The elector
//    bounds its renewals by its local lease this way (leader_elector.h). kNoDeadline: the
//    backend's own bounds alone.
//  - The interface assumes no real time and no sockets. A backend that waits (retry backoff, a
//    contended file lock) waits through the kvchaos::Runtime it was built with.
//  - Calls are thread-safe and may block for a bounded time (the backend's timeout × retries, or
//    until the deadline, whichever comes first).
//  - Status codes: kLockLost = the caller does not hold the lock (anymore); kAlreadyExists = the
//    lock is held by someone else; kNotFound = no such value; kUnavailable / kTimeout = the backend
//    could not be reached (the outcome of a write is then unknown); kInvalidArgument = bad key etc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos::election {

// A fencing token: strictly increasing per lock key over every successful TryLock (and
// RaiseTokenFloor), kept by the backend (it survives Unlock and expiry, but not a backend that
// loses its data: then the counter starts again at 1 and RaiseTokenFloor puts it back past what
// the fenced resource has seen). 0 is never a granted token; it means "none".
using FencingToken = uint64_t;

// What TryLock grants.
struct LockGrant {
  FencingToken token = 0;
};

// Who holds a lock now, as the backend sees it.
struct LockHolderInfo {
  // Empty when nobody holds the lock (free or expired).
  std::string holder;
  // Time left on the backend's own clock when it answered; zero when free. The caller must not
  // turn this into a deadline on its own clock without allowing for drift and the round trip.
  Duration remaining_ttl{0};
  // Token of the current holding (the newest granted token for the key); 0 when never granted, and
  // 0 for a holder that took no token (an upstream peer on Redis: it has no fencing). With no
  // holder: the newest granted token.
  FencingToken token = 0;
};

// "No deadline" for a lock call: only the backend's own timeout and retries bound it.
inline constexpr MonoTime kNoDeadline = MonoTime::max();

// One entry of ListValues.
struct KeyValue {
  std::string key;
  std::string value;
  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

class CoordinationBackend {
 public:
  virtual ~CoordinationBackend() = default;

  // Prepares the backend (connects, loads scripts, creates the directory). Calls made before or
  // after a failed Init retry the preparation themselves, so a node may start while Redis is down.
  virtual Status Init() = 0;

  // --- Leased locks (leader election) -------------------------------------------------------
  // Takes `key` for `holder` for `lease` when it is free or expired. When `holder` already holds
  // it (re-entry), the lease restarts at full length. Either way the grant carries a new fencing
  // token, greater than every token granted for `key` before. kAlreadyExists (message names the
  // current holder) when someone else holds it. `lease` must be > 0.
  // Every lock call takes a `deadline` (see the rules above; kNoDeadline for none). A call that
  // times out may still have been applied.
  virtual Result<LockGrant> TryLock(std::string_view key, std::string_view holder, Duration lease,
                                    MonoTime deadline) = 0;

  // Restarts the lease of `key` at `lease` if `holder` holds it; the token stays the same.
  // kLockLost when the lock is free, expired or held by someone else.
  virtual Status RenewLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) = 0;

  // Releases `key` if `holder` holds it. kLockLost when it does not (nothing is changed).
  virtual Status Unlock(std::string_view key, std::string_view holder, MonoTime deadline) = 0;

  // Who holds `key` now (holder empty when nobody does).
  virtual Result<LockHolderInfo> GetLockHolder(std::string_view key, MonoTime deadline) = 0;

  // Fencing floor (kvchaos, see leader_elector.h): if `holder` holds `key`, sets the key's token
  // counter to max(counter, floor) + 1 and makes that the holding's token, atomically, and returns
  // it (so it is > floor and > every token granted before; later TryLocks grant more). Used when
  // the backend lost its counter (restart without persistence) and granted a token that a fenced
  // resource has already seen. kLockLost when `holder` does not hold `key` (nothing changes);
  // InvalidArgument when `floor` leaves no room below 2^63 - 1 (Redis counters are signed 64-bit).
  virtual Result<FencingToken> RaiseTokenFloor(std::string_view key, std::string_view holder, FencingToken floor,
                                               MonoTime deadline) = 0;

  // --- Values (node endpoints, heartbeats) --------------------------------------------------
  // Sets `key` to `value` with no expiry (replacing any TTL it had).
  virtual Status SetValue(std::string_view key, std::string_view value) = 0;
  // Sets `key` to `value`; it disappears `ttl` after this call unless set again (ttl > 0).
  virtual Status SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) = 0;
  // kNotFound when absent or expired.
  virtual Result<std::string> GetValue(std::string_view key) = 0;
  // Removes `key`; OK when it was already absent.
  virtual Status DeleteValue(std::string_view key) = 0;
  // Every live value whose key starts with `prefix`, sorted by key (so callers never depend on
  // hash or scan order). Values expire as with GetValue.
  virtual Result<std::vector<KeyValue>> ListValues(std::string_view prefix) = 0;

  // For logs and errors: "redis://127.0.0.1:6379 db=0 cluster=x" (no secrets).
  virtual std::string Describe() const = 0;
};

// Well-known keys, compatible with upstream peers (REFERENCE.md).
inline constexpr std::string_view kLeaderLockKey = "_TAIR_KVCM_LEADER_KEY";
inline constexpr std::string_view kNodeInfoKeyPrefix = "_TAIR_KVCM_NODE_INFO_";
// Heartbeats of live nodes (kvchaos extension: TTL'd, so departed nodes disappear).
inline constexpr std::string_view kNodeHeartbeatKeyPrefix = "_KVCHAOS_NODE_HEARTBEAT_";

// The largest floor RaiseTokenFloor accepts (its answer, floor + 1, must fit a Redis counter).
inline constexpr FencingToken kMaxTokenFloor = (FencingToken{1} << 63) - 2;
// InvalidArgument naming `floor` when it is above kMaxTokenFloor; every backend checks this first.
Status ValidateTokenFloor(FencingToken floor);

// Keys are non-empty, at most 512 bytes, printable ASCII without spaces; InvalidArgument names the
// key and the problem. Every backend checks keys (and lock holders) with this first.
Status ValidateKey(std::string_view what, std::string_view key);

// InvalidArgument naming `what` ("lease", "ttl") when `d` is not > 0; every backend checks leases and TTLs with it.
Status ValidatePositive(std::string_view what, Duration d);

}  // namespace kvchaos::election
