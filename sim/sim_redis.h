// SimRedis: the coordination backend's server side with Redis semantics, on the backend's own
// clock. Locks expire by the backend's wall clock (Redis stores expiries as absolute Unix
// milliseconds, so a step of that clock moves every expiry); every TryLock grant takes the next
// value of a per-key counter (the fencing token, the INCR of the production script), and
// RaiseTokenFloor moves it past a floor for the holder, as the production script does; values may
// carry a TTL. It also hosts the fenced resource (the meta indexer lives in the same Redis).
// The process can go down (requests are refused) and restart with its data, or without it (the
// counter and the indexer's newest token are then lost, as with Redis without persistence).
// Requests are applied on the scheduler context when the simulated network delivers them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/election/coordination_backend.h"
#include "sim/fenced_resource.h"
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
    kFencedWrite,
    kRaiseTokenFloor,  // token = the floor
    kFenceNewest,      // the fenced resource's newest accepted token
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

class SimRedis {
 public:
  SimRedis(SimRuntime& runtime, int clock_node, bool fence_check);

  BackendReply Apply(const BackendRequest& request);

  bool up() const { return up_; }
  void Crash();
  // Without persistence the keys and fencing counters are lost; the fenced resource forgets its
  // newest token too unless `keep_fence` (the indexer it models keeps its own durable state).
  void Restart(bool persistent, bool keep_fence = false);

  FencedResource& resource() { return resource_; }
  const std::vector<GrantRecord>& grants() const { return grants_; }
  uint64_t token_regressions() const { return token_regressions_; }
  // Writes the fence refused although their node held the lock with that very token: the
  // legitimate leader could not write (a liveness loss, e.g. a counter reset below the fence).
  uint64_t holder_writes_rejected() const { return holder_writes_rejected_; }
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
  int clock_node_;
  bool up_ = true;
  std::map<std::string, Lock> locks_;
  std::map<std::string, uint64_t> counters_;
  std::map<std::string, Value> values_;
  FencedResource resource_;
  // Ground truth across restarts.
  std::vector<GrantRecord> grants_;
  std::map<std::string, uint64_t> max_granted_;
  uint64_t token_regressions_ = 0;
  uint64_t holder_writes_rejected_ = 0;
  uint64_t applied_ = 0;
};

}  // namespace kvchaos::sim
