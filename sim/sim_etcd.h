// SimEtcd: an etcd cluster of a few members (3 in the world) on the simulated hosts and clocks,
// answering the requests of etcd's v3 JSON gateway as etcd does — so the production
// CoordinationEtcdBackend (core/election/coordination_etcd_backend.h) runs against it unchanged,
// through SimEtcdTransport (sim/sim_etcd_transport.h).
//
// What it models:
//  - Raft leadership, at cluster level: one leader at a time, among members that reach a
//    majority. When the leader is lost (crashed, paused, cut from its peers) the others notice
//    after an election timeout drawn from the seed (uniform in [min, max), as etcd randomizes it)
//    and elect one of the members that reach a majority; with no majority there is no leader.
//    Requests at a member while it still believes in a lost leader get no answer (they hang in
//    etcd); at a member that knows it has none, "etcdserver: no leader" at once (every request of
//    the gateway carries `hasleader`), as at a member cut off from the leader for longer than an
//    election timeout.
//  - A linearizable KV with one global revision: create/mod revision and version per key; range
//    (a key, a range end, a prefix; limit, count_only), put (on a lease, prev_kv), delete range
//    (prev_kv), txn with compares on create/mod revision, version, value, lease (EQUAL,
//    NOT_EQUAL, GREATER, LESS) and success/failure ops (range, put, delete range).
//  - Leases: grant (at least min_ttl_s), keep-alive, revoke, time-to-live; expiry is measured on
//    the raft leader's monotonic clock and an expired lease is revoked (its keys deleted, one
//    revision) within revoke_delay_max after its end (etcd's lessor checks every 500 ms); a new
//    leader gives every live lease a fresh TTL, as etcd's lessor does on promotion.
//  - Member faults: a crashed member refuses connections (and restarts with its data: etcd keeps
//    it on disk); a paused one holds every request and answers them when resumed; peers can be cut
//    from each other.
// Not modelled: compaction, watch, auth, member changes, snapshots, raft log replication delays
// (a write is committed the moment the leader applies it), request size limits.
// Every decision comes from the Rng it is given, and every state change is a trace event.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/rng.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

struct SimEtcdOptions {
  // etcd's default election timeout is 1000 ms; a member waits [timeout, 2 x timeout).
  int64_t election_timeout_min_ns = 1'000'000'000;
  int64_t election_timeout_max_ns = 2'000'000'000;
  // The vote itself, once a member campaigns.
  int64_t vote_max_ns = 20'000'000;
  // etcd grants at least 1.5 election timeouts, in whole seconds (2 s with its defaults).
  int64_t min_ttl_s = 2;
  // How long after its end an expired lease is revoked at most (the lessor's 500 ms check).
  int64_t revoke_delay_max_ns = 500'000'000;
};

// The HTTP answer of one member to one request; `refused`: no connection (a crashed member).
struct EtcdAnswer {
  bool refused = false;
  int http_status = 0;
  std::string body;
};

// One key changed by a committed write (a put, a delete, a lease revoke).
struct EtcdChange {
  std::string key;
  bool deleted = false;
  std::string value;
  int64_t lease = 0;
};
struct EtcdCommit {
  int64_t revision = 0;
  std::vector<EtcdChange> changes;
};

struct SimEtcdCounters {
  uint64_t requests = 0;
  uint64_t refused = 0;      // at a crashed member
  uint64_t unanswered = 0;   // held by a member that waited for a lost leader
  uint64_t no_leader = 0;    // "no leader" answers
  uint64_t elections = 0;    // leaders elected (the first one included)
  uint64_t leases_expired = 0;
};

class SimEtcd {
 public:
  using Respond = std::function<void(EtcdAnswer)>;

  // One member per host in `hosts` (their clocks are the members' clocks). A leader is elected
  // at true time 0 (a cluster that is already up when the run starts).
  SimEtcd(SimRuntime& runtime, std::vector<int> hosts, Rng rng, SimEtcdOptions options = {});
  SimEtcd(const SimEtcd&) = delete;
  SimEtcd& operator=(const SimEtcd&) = delete;

  int members() const { return static_cast<int>(members_.size()); }
  int host(int member) const { return members_[static_cast<size_t>(member)].host; }
  // The member that is `host`, or -1.
  int MemberOnHost(int host) const;

  // A request that reached `member` (on the scheduler context): POST `path` with JSON `body`.
  // `respond` runs now, when a paused member resumes, or never (see the header comment).
  void Serve(int member, const std::string& path, const std::string& body, Respond respond);

  // Member faults. Crash drops what a paused member held; Restart comes back with the data.
  void Crash(int member);
  void Restart(int member);
  void Pause(int member);
  void Resume(int member);
  // Cuts (or heals) the raft link between two members.
  void CutPeers(int a, int b, bool cut);
  bool up(int member) const { return members_[static_cast<size_t>(member)].up; }
  bool paused(int member) const { return members_[static_cast<size_t>(member)].paused; }

  int leader() const { return leader_; }  // -1: none now
  uint64_t term() const { return term_; }
  int64_t revision() const { return revision_; }
  const SimEtcdCounters& counters() const { return counters_; }

  // Every committed write, in order (the ground truth reads the lock keys from it).
  void SetCommitHook(std::function<void(const EtcdCommit&)> hook) { commit_hook_ = std::move(hook); }
  // Every lease whose end moved (granted, kept alive, extended by a new leader): the true time
  // its end is due on the leader's clock.
  void SetLeaseHook(std::function<void(int64_t lease, TrueNs ends)> hook) { lease_hook_ = std::move(hook); }

 private:
  struct HeldRequest {
    std::string path;
    std::string body;
    Respond respond;
  };
  struct Member {
    int host = -1;
    bool up = true;
    bool paused = false;
    std::vector<HeldRequest> held;  // what reached it while paused, in arrival order
    TrueNs lost_leader_at = -1;  // when it last lost contact with a leader (-1: has one, or never)
  };
  struct Kv {
    std::string value;
    int64_t create_revision = 0;
    int64_t mod_revision = 0;
    int64_t version = 0;
    int64_t lease = 0;
  };
  struct Lease {
    int64_t ttl_s = 0;
    int64_t expire_mono_ns = 0;  // on the leader's monotonic clock
    std::set<std::string> keys;
    bool check_armed = false;
  };
  // An etcd error answer (gRPC code and message), or the answer's JSON.
  struct Reply {
    int grpc_code = 0;
    std::string message;
    nlohmann::json json;
  };

  bool Alive(int m) const;
  bool Connected(int a, int b) const;
  bool HasQuorum(int m) const;
  // After any change of members or links: loses the leader, arms an election, notes who is cut off.
  void Reconsider();
  void ArmElection(bool after_loss);
  void Elect(uint64_t generation);
  // Whether `member` can serve now; otherwise it answers "no leader" or holds the request.
  enum class Reach { kServe, kNoLeader, kHang };
  Reach ReachOf(int member) const;
  void Answer(int member, const std::string& path, const std::string& body, const Respond& respond);
  Reply Apply(const std::string& path, const nlohmann::json& request);

  // The KV and leases (pure state transitions; a write bumps the revision once).
  Reply Range(const nlohmann::json& r) const;
  Reply Put(const nlohmann::json& r, EtcdCommit* commit);
  Reply DeleteRange(const nlohmann::json& r, EtcdCommit* commit);
  Reply Txn(const nlohmann::json& r, EtcdCommit* commit);
  bool Compare(const nlohmann::json& c) const;
  Reply LeaseGrant(const nlohmann::json& r);
  Reply LeaseRevoke(const nlohmann::json& r, EtcdCommit* commit);
  Reply LeaseKeepAlive(const nlohmann::json& r, EtcdCommit* commit);
  Reply LeaseTimeToLive(const nlohmann::json& r) const;
  void RevokeLease(int64_t id, EtcdCommit* commit);
  void Commit(EtcdCommit* commit);
  nlohmann::json Header() const;
  nlohmann::json KvJson(const std::string& key, const Kv& kv) const;
  void DeleteKey(const std::string& key, EtcdCommit* commit);

  int64_t LeaderMonoNs() const;
  void RefreshLease(int64_t id, Lease& lease);
  void ArmExpiryCheck(int64_t id);
  void CheckExpiry(int64_t id);

  void Note(int member, std::string_view what, int64_t a = 0, int64_t b = 0);

  SimRuntime& runtime_;
  std::vector<Member> members_;
  std::vector<std::vector<bool>> cut_;
  Rng rng_;
  const SimEtcdOptions options_;
  int leader_ = -1;
  uint64_t term_ = 0;
  bool election_armed_ = false;
  bool after_loss_ = false;        // the pending election follows a lost leader (members still believe in it)
  uint64_t election_generation_ = 0;
  int64_t revision_ = 1;           // etcd starts at 1
  std::map<std::string, Kv> kvs_;  // ordered: ranges list in key order
  std::map<int64_t, Lease> leases_;
  int64_t next_lease_id_ = 0x694d7a5e00000001;
  SimEtcdCounters counters_;
  std::function<void(const EtcdCommit&)> commit_hook_;
  std::function<void(int64_t, TrueNs)> lease_hook_;
};

}  // namespace kvchaos::sim
