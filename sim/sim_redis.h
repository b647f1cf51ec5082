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
// Replication (sim/sim_sentinel.h): every write hands the resulting state of its key (a KeyState,
// expiries absolute, as Redis replicates them) to a write hook; a replica applies those states
// as they arrive. The ground truth (grants, lease ends, regressions, duplicate holders) is shared
// by a primary and its replica, so it spans a failover.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
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

// The state of one key after a write, as the primary replicates it (absent: deleted or expired).
struct KeyState {
  struct Lock {
    std::string holder;
    int64_t expire_at_ns = 0;  // the primary's wall clock: absolute, as Redis replicates expiries
    uint64_t token = 0;
  };
  struct Value {
    std::string value;
    int64_t expire_at_ns = 0;  // 0: no expiry
  };
  std::string key;
  std::optional<Lock> lock;
  std::optional<uint64_t> counter;
  std::optional<Value> value;
};

// What happened to the leader lock, in true time, across every server of the group.
struct CoordinationTruth {
  std::vector<GrantRecord> grants;
  std::map<LeaseEnd, TrueNs> lease_ends;
  std::map<std::string, uint64_t> max_granted;
  uint64_t token_regressions = 0;
  // Per key: the holding the last grant, renewal or unlock left, with its lease end in true time.
  struct Holding {
    std::string holder;
    int host = -1;             // the server that granted or last renewed it
    int64_t expire_at_ns = 0;  // on that server's wall clock
  };
  std::map<std::string, Holding> holdings;
  // Grants to one holder while the server that granted or last renewed another holder's lease
  // would still say that lease runs: two holders of "the" lock (a promoted replica that lacked it).
  uint64_t duplicate_holders = 0;
};

class SimRedis {
 public:
  // Runs on `host` (its clock is Redis's clock). A replica shares its primary's `truth`.
  SimRedis(SimRuntime& runtime, int host, std::shared_ptr<CoordinationTruth> truth = nullptr);

  int host() const { return host_; }
  BackendReply Apply(const BackendRequest& request);

  bool up() const { return up_; }
  void Crash();
  // Without persistence the keys and fencing counters are lost.
  void Restart(bool persistent);

  // Ground truth: `holder` holds a live lock whose holding has `token`.
  bool HeldWith(std::string_view holder, uint64_t token);
  const std::vector<GrantRecord>& grants() const { return truth_->grants; }
  const std::map<LeaseEnd, TrueNs>& lease_ends() const { return truth_->lease_ends; }
  uint64_t token_regressions() const { return truth_->token_regressions; }
  uint64_t duplicate_holders() const { return truth_->duplicate_holders; }
  const std::shared_ptr<CoordinationTruth>& truth() const { return truth_; }
  uint64_t applied() const { return applied_; }

  // Replication: `hook` gets the state of each key a request changed, in the order applied.
  void SetWriteHook(std::function<void(KeyState)> hook) { write_hook_ = std::move(hook); }
  // A replica applies what its primary sent.
  void ApplyReplicated(const KeyState& state);
  // What this server holds for `key` now (tests compare a replica with its primary).
  KeyState StateOf(const std::string& key) const;

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
  void Replicate(const std::string& key) const;
  void RecordGrant(const std::string& key, const std::string& holder, uint64_t token, bool new_holding,
                   int64_t duration_ns);

  SimRuntime& runtime_;
  int host_;
  bool up_ = true;
  std::map<std::string, Lock> locks_;
  std::map<std::string, uint64_t> counters_;
  std::map<std::string, Value> values_;
  // Ground truth across restarts (and failovers: shared with the replica).
  std::shared_ptr<CoordinationTruth> truth_;
  std::function<void(KeyState)> write_hook_;
  uint64_t applied_ = 0;
};

}  // namespace kvchaos::sim
