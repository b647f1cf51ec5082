// SimEtcdLockTruth: grants and lease ends read from SimEtcd's commits (see the header).
#include "sim/sim_etcd_truth.h"

#include <charconv>

namespace kvchaos::sim {

SimEtcdLockTruth::SimEtcdLockTruth(SimRuntime& runtime, SimEtcd& etcd, std::string lock_prefix,
                                   std::string fence_prefix)
    : runtime_(runtime), lock_prefix_(std::move(lock_prefix)), fence_prefix_(std::move(fence_prefix)) {
  etcd.SetCommitHook([this](const EtcdCommit& commit) { OnCommit(commit); });
  etcd.SetLeaseHook([this](int64_t lease, TrueNs ends) { OnLease(lease, ends); });
}

bool SimEtcdLockTruth::HeldWith(std::string_view holder, uint64_t token) const {
  for (const auto& [lock, h] : holdings_) {  // std::map: key order
    if (h.holder == holder && h.token == token) return true;
  }
  return false;
}

TrueNs SimEtcdLockTruth::EndOfLease(int64_t lease) const {
  auto it = lease_ends_.find(lease);
  return it == lease_ends_.end() ? runtime_.true_now() : it->second;
}

void SimEtcdLockTruth::RecordGrant(const std::string& lock, const Holding& h) {
  uint64_t& max = truth_.max_granted[lock];
  if (h.token <= max) ++truth_.token_regressions;
  if (h.token > max) max = h.token;
  truth_.grants.push_back(GrantRecord{runtime_.true_now(), h.holder, h.token});
  truth_.lease_ends[LeaseEnd{h.holder, h.token}] = EndOfLease(h.lease);
}

void SimEtcdLockTruth::OnCommit(const EtcdCommit& commit) {
  std::map<std::string, const EtcdChange*> locks;
  std::map<std::string, const EtcdChange*> fences;
  for (const EtcdChange& c : commit.changes) {
    if (c.key.compare(0, lock_prefix_.size(), lock_prefix_) == 0) locks[c.key.substr(lock_prefix_.size())] = &c;
    if (c.key.compare(0, fence_prefix_.size(), fence_prefix_) == 0) fences[c.key.substr(fence_prefix_.size())] = &c;
  }
  for (const auto& [name, fence] : fences) {
    if (fence->deleted) continue;
    uint64_t token = 0;
    std::from_chars(fence->value.data(), fence->value.data() + fence->value.size(), token);
    auto lock = locks.find(name);
    auto held = holdings_.find(name);
    if (lock != locks.end() && !lock->second->deleted) {
      // A grant: the lock and its counter in one transaction (TryLock, re-entry included).
      if (held != holdings_.end() && held->second.holder != lock->second->value) {
        ++truth_.duplicate_holders;  // etcd is linearizable: a free lock is never taken twice
        runtime_.trace().Event(runtime_.true_now(), -1, 0, "duplicate-holder", static_cast<int64_t>(token), 0,
                               lock->second->value);
      }
      holdings_[name] = Holding{lock->second->value, token, lock->second->lease};
      RecordGrant(name, holdings_[name]);
      locks.erase(lock);
    } else if (held != holdings_.end()) {
      // RaiseTokenFloor: the same holding, a new token.
      held->second.token = token;
      RecordGrant(name, held->second);
    }
  }
  for (const auto& [name, lock] : locks) {
    if (lock->deleted) {
      holdings_.erase(name);  // Unlock, or its lease revoked or expired
    } else if (auto held = holdings_.find(name); held != holdings_.end() && held->second.holder == lock->value) {
      held->second.lease = lock->lease;  // a renewal that moved the lock to a longer lease
      truth_.lease_ends[LeaseEnd{held->second.holder, held->second.token}] = EndOfLease(lock->lease);
    }
  }
}

void SimEtcdLockTruth::OnLease(int64_t lease, TrueNs ends) {
  lease_ends_[lease] = ends;
  for (const auto& [name, h] : holdings_) {
    if (h.lease == lease) truth_.lease_ends[LeaseEnd{h.holder, h.token}] = ends;
  }
}

}  // namespace kvchaos::sim
