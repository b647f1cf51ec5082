// SimEtcdLockTruth: the ground truth of the locks a CoordinationEtcdBackend keeps on SimEtcd, for
// the checkers (grants with their tokens, where each holding's lease ends in true time, who holds
// what now). It reads SimEtcd's committed writes on the backend's lock and fence keys (a lock key
// put with its fence in one commit is a grant; a fence put alone raises the holding's token; a
// lock key deleted ends the holding) and the leases' ends, so it watches the production
// backend's effects without repeating its logic. The checkers take it as they take SimRedis's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "sim/sim_etcd.h"
#include "sim/sim_redis.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

class SimEtcdLockTruth {
 public:
  // Watches `etcd` (its commit and lease hooks); `lock_prefix` and `fence_prefix` are the
  // backend's LockKey("") and FenceKey("").
  SimEtcdLockTruth(SimRuntime& runtime, SimEtcd& etcd, std::string lock_prefix, std::string fence_prefix);

  // `holder` holds a lock whose holding has `token` (its key exists: etcd has not revoked it).
  bool HeldWith(std::string_view holder, uint64_t token) const;
  const CoordinationTruth& truth() const { return truth_; }

 private:
  struct Holding {
    std::string holder;
    uint64_t token = 0;
    int64_t lease = 0;
  };
  void OnCommit(const EtcdCommit& commit);
  void OnLease(int64_t lease, TrueNs ends);
  void RecordGrant(const std::string& lock, const Holding& holding);
  TrueNs EndOfLease(int64_t lease) const;

  SimRuntime& runtime_;
  const std::string lock_prefix_;
  const std::string fence_prefix_;
  std::map<std::string, Holding> holdings_;  // by lock name
  std::map<int64_t, TrueNs> lease_ends_;     // by lease ID
  CoordinationTruth truth_;
};

}  // namespace kvchaos::sim
