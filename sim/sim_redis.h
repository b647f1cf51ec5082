// SimRedis: the coordination backend's server side with Redis semantics, on the backend's own
// clock. Locks expire by the backend's wall clock (Redis stores expiries as absolute Unix
// milliseconds, so a step of that clock moves every expiry); every TryLock grant takes the next
// value of a per-key counter (the fencing token, the INCR of the production script), and
// RaiseTokenFloor moves it past a floor for the holder, as the production script does; values may
// carry a TTL. The process can go down (requests are refused) and restart with its data, or
// without it (the counters are then lost, as with Redis without persistence).
// These are the semantics of the production Lua scripts (core/election/coordination_redis_backend.cc);
// core/election/tests/coordination_contract.h checks both against the same contract.
// Requests are applied on the scheduler context when the simulated network delivers them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/common/status.h"
#include "core/election/coordination_backend.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

struct BackendRequest {
  enum class Op : uint8_t {
    kTryLock,
    kRenewLock,
    kUnlock,
    kGetLockHolder,
    kSetValue,
    kSetValueWithTtl,
    kGetValue,
    kDeleteValue,
    kListValues,
    kRaiseTokenFloor,  // token = the floor
  };
  Op op = Op::kGetValue;
  std::string key;
  std::string arg;  // holder or value
  int64_t duration_ns = 0;
  uint64_t token = 0;
  int node = -1;
};
// Short name of an operation for traces ("TryLock", ...).
const char* OpName(BackendRequest::Op op);
// The same as a trace tag (hashed once).
const TraceTag& OpTag(BackendRequest::Op op);

struct BackendReply {
  Status status;
  uint64_t token = 0;
  std::string text;  // holder or value
  int64_t ttl_ns = 0;
  std::vector<election::KeyValue> values;
};

// A lock grant (or a raise of the holding's token) as the ground truth sees it.
struct GrantRecord {
  TrueNs t = 0;
  std::string holder;
  uint64_t token = 0;
};

// Where a holding's lease ends in true time, as the backend's last grant or renewal set it.
struct LeaseEnd {
  std::string holder;
  uint64_t token = 0;
  bool operator<(const LeaseEnd& o) const { return std::tie(holder, token) < std::tie(o.holder, o.token); }
};

class SimRedis {
 public:
  // Runs on `host` (its clock is Redis's clock).
  SimRedis(SimRuntime& runtime, int host);

  int host() const { return host_; }
  BackendReply Apply(const BackendRequest& request);

  bool up() const { return up_; }
  void Crash();
  // Without persistence the keys and fencing counters are lost.
  void Restart(bool persistent);

  // Ground truth: `holder` holds a live lock whose holding has `token`.
  bool HeldWith(std::string_view holder, uint64_t token);
  const std::vector<GrantRecord>& grants() const { return grants_; }
  const std::map<LeaseEnd, TrueNs>& lease_ends() const { return lease_ends_; }
  uint64_t token_regressions() const { return token_regressions_; }
  uint64_t applied() const { return applied_; }

 private:
  struct Lock {
    std::string holder;
    int64_t expire_at_ns = 0;  // backend wall clock
    uint64_t token = 0;        // of this holding (TryLock's grant, or RaiseTokenFloor's)
  };
  struct Value {
    std::string value;
    int64_t expire_at_ns = 0;  // 0: no expiry
  };
  int64_t WallNs() const;
  const Lock* LiveLock(const std::string& key);

  SimRuntime& runtime_;
  int host_;
  bool up_ = true;
  std::map<std::string, Lock> locks_;
  std::map<std::string, uint64_t> counters_;
  std::map<std::string, Value> values_;
  // Ground truth across restarts.
  std::vector<GrantRecord> grants_;
  std::map<LeaseEnd, TrueNs> lease_ends_;
  std::map<std::string, uint64_t> max_granted_;
  uint64_t token_regressions_ = 0;
  uint64_t applied_ = 0;
};

}  // namespace kvchaos::sim
