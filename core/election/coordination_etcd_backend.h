// CoordinationEtcdBackend: the coordination contract on an etcd cluster (3.4 or later), through
// its v3 JSON gateway (EtcdGateway: failover between members, per-call deadlines). etcd is
// linearizable: a member cut off from the quorum serves nothing (it answers "no leader" and the
// gateway moves on), and a write acknowledged by one member is seen by all.
//
// Keys, under the URI's prefix P (default "kvchaos/"):
//   P lock/<key>   the lock: value = holder, attached to an etcd lease of its own
//   P fence/<key>  the fencing counter (decimal), no lease: it survives Unlock and expiry
//   P kv/<key>     values; a TTL'd value is attached to a lease of its own
// TryLock reads the lock and the counter, grants a lease, then commits one transaction: "the lock
// key does not exist (create_revision 0; or, for re-entry, still holds the holder at the revision
// read) and the counter is at the revision read" -> put the lock on the new lease and the counter
// + 1, which is the token. A concurrent change makes the compare fail and the call reads again (a
// bounded number of rounds), so tokens only go up and are never granted twice. RenewLock keeps the
// lock's lease alive after checking that the lock holds the holder; Unlock deletes the lock in a
// transaction that compares the value, then revokes its lease. RaiseTokenFloor is a transaction
// that compares the holder and the counter's revision.
//
// Time: etcd leases count whole seconds on the etcd leader's clock, and etcd grants at least its
// minimum TTL (about 1.5 election timeouts: 2 s with etcd's defaults). A lease or TTL is asked for
// as ceil(seconds), at least 1, so the server never holds less than the caller asked — a lock
// lasts longer than asked, never shorter, which keeps the elector's local lease safe. Expired
// leases are revoked by etcd's leader within about half a second after their end. When a renewal
// finds a lease granted shorter than asked (a renewal with a longer lease), it moves the lock to
// a new lease of the asked length in a transaction that compares holder and lease.
//
// Leases left behind (a TryLock that lost its race, a renewal that moved the lock, a value set
// again) are revoked at once; when that revoke gets no answer they simply expire.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/election/coordination_backend.h"
#include "core/election/coordination_uri.h"
#include "core/election/etcd_gateway.h"
#include "core/election/etcd_json.h"

namespace kvchaos::election {

class CoordinationEtcdBackend final : public CoordinationBackend {
 public:
  // `transport` carries the gateway's requests (null: HTTP to the members; the simulator passes
  // its network's, sim/sim_etcd_transport.h).
  CoordinationEtcdBackend(Runtime& runtime, EtcdEndpoints endpoints, std::unique_ptr<EtcdTransport> transport = nullptr);

  // Checks that some member answers a linearizable read (it has a leader and a quorum).
  Status Init() override;
  Result<LockGrant> TryLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override;
  Status RenewLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override;
  Status Unlock(std::string_view key, std::string_view holder, MonoTime deadline) override;
  Result<LockHolderInfo> GetLockHolder(std::string_view key, MonoTime deadline) override;
  Result<FencingToken> RaiseTokenFloor(std::string_view key, std::string_view holder, FencingToken floor,
                                       MonoTime deadline) override;
  Status SetValue(std::string_view key, std::string_view value) override;
  Status SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) override;
  Result<std::string> GetValue(std::string_view key) override;
  Status DeleteValue(std::string_view key) override;
  Result<std::vector<KeyValue>> ListValues(std::string_view prefix) override;
  // "etcd://h1:2379,h2:2379 prefix=kvchaos/".
  std::string Describe() const override;

  // etcd key names (exposed for tests and operators).
  std::string LockKey(std::string_view key) const;
  std::string FenceKey(std::string_view key) const;
  std::string ValueKey(std::string_view key) const;
  // The lease length asked of etcd for `d`: whole seconds, rounded up, at least 1.
  static int64_t LeaseSeconds(Duration d);
  // The member requests go to first (after a failover: the one that answered); for tests.
  std::string PreferredMember() { return gateway_.PreferredMember(); }

 private:
  // The lock and its counter, read in one transaction (one revision).
  struct LockState {
    std::optional<etcd_json::KeyRecord> lock;
    FencingToken counter = 0;
    int64_t counter_mod_revision = 0;  // 0: the counter does not exist yet
  };
  Result<LockState> ReadLock(std::string_view key, MonoTime deadline);
  // A new lease of LeaseSeconds(length); its ID.
  Result<int64_t> GrantLease(Duration length, MonoTime deadline, std::string_view what);
  // Revokes `lease` when there is time before `deadline`; a lease that stays expires by itself.
  void RevokeQuietly(int64_t lease, MonoTime deadline);
  // A transaction: when every compare holds, the success operations. (Vectors, not JSON: a
  // braced list of one JSON value would be that value, not an array of it.)
  Result<nlohmann::json> Txn(std::vector<nlohmann::json> compare, std::vector<nlohmann::json> success,
                             MonoTime deadline);
  // Puts a value (on `lease`, 0 for none) and revokes the lease the value was on before, if any.
  Status PutValue(std::string_view key, std::string_view value, int64_t lease, std::string_view what);

  Runtime& runtime_;
  const std::string prefix_;
  EtcdGateway gateway_;
};

}  // namespace kvchaos::election
