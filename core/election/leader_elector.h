// LeaderElector: lease-based leader election over a CoordinationBackend lock.
//
// States FOLLOWER → PROMOTING → LEADER → DEMOTING → FOLLOWER. Three threads, all started through
// kvchaos::Runtime (so the simulator runs this exact code on virtual time):
//  - kvc_lease_lock: every loop_interval_ms campaigns (GetLockHolder + TryLock) when it does not
//    hold the lock, or renews it when it does (sooner after a failed renewal, see below);
//  - kvc_lease_check: ends the term on its own when the local lease deadline passes, even while
//    the lock thread is stuck inside a backend call;
//  - kvc_transition: runs OnBecomeLeader / OnNoLongerLeader one at a time, in order.
//
// Safety rules (beyond upstream):
//  - The lease deadline is measured from the time read *before* the request that got or renewed
//    the lock, minus a safety margin for clock drift and scheduling; it is never taken from the
//    backend's answer (that is another clock).
//  - IsLeader() checks that deadline on every call, not a flag.
//  - Renewals are bounded by the local lease, not by the backend's timeout × retries: each renew
//    call gets a deadline (CoordinationBackend) of half the lease time left (RenewCallBudget), and
//    after a failed one the next leaves at once (it used its budget) or within that budget (it
//    failed fast), so a silent backend meets calls closer and closer to the deadline and an outage
//    that ends before lease_end − margin is met by a call that still has time to be answered. A
//    renewal answered after the local deadline never revives the term (the epoch and deadline
//    checks below). Campaign calls get the usable lease (lease − margin) as their deadline.
//  - Every term has an epoch: a backend answer is applied only if no demotion (admin Demote, lease
//    expiry, Stop) happened while it was in flight; a lock granted to a stale campaign is released.
//  - The transition thread works towards the *wanted* state rather than replaying a queue, so a
//    demotion that arrives while PROMOTING (or before a queued promotion ran) is never lost.
//  - Every term carries the backend's fencing token; data-plane writes pass it to the indexer.
//  - Fencing floor: a backend that lost its data (Redis restarted empty) counts tokens from 1
//    again, so a new term's grant may be ≤ the newest token the fenced resource (meta indexer)
//    has already seen — equal lets a resumed zombie of that old term and the new leader both in,
//    lower refuses every write of the new leader. So before serving, the owner of the fenced
//    resource reads its newest token and calls RaiseTokenAbove(): when the grant is not above it,
//    the backend raises its counter past it for this holding (RaiseTokenFloor, holder-checked) and
//    the term adopts the raised token (Snapshot, CurrentToken report it from then on). The owner
//    then raises the resource's fence to the term's token, so the old term is refused even before
//    the new leader writes. MetaNode does this in its recovery (retried in-term like any recovery
//    step); the simulator's node model does the same against its fenced resource.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/common/thread_annotations.h"
#include "core/election/coordination_backend.h"

namespace kvchaos::election {

enum class ElectorState : int {
  kFollower = 0,
  kPromoting = 1,
  kLeader = 2,
  kDemoting = 3,
};
// "FOLLOWER", "PROMOTING", "LEADER", "DEMOTING".
std::string_view ElectorStateName(ElectorState state);

struct LeaderElectorOptions {
  // This node's id; also the lock's holder value (so any node can read who leads). Required.
  std::string node_id;
  std::string lock_key = std::string(kLeaderLockKey);
  int64_t lease_ms = 10000;
  // Period of the lock and lease-check threads; should be < lease_ms / 10 (upstream advice).
  int64_t loop_interval_ms = 100;
  // Subtracted from every lease deadline. -1 = default: DefaultSafetyMarginMs(lease, loop).
  int64_t safety_margin_ms = -1;
  // Default cool-down of Demote() before this node campaigns again.
  int64_t forbid_campaign_time_ms = 0;

  // Bugs the simulator can plant to prove its checkers catch them. All off in production.
  struct TestingKnobs {
    // Use a safety margin of 0 (the deadline may then outlive the server-side key under drift).
    bool no_safety_margin = false;
    // Measure the lease from the time the response arrived instead of before the request.
    bool lease_from_response = false;
    // IsLeader() answers from the state flag and stays true while DEMOTING (the upstream
    // behaviour): a demoted node keeps serving until its callback finishes.
    bool serve_while_demoting = false;
  };
  TestingKnobs testing;
};

// Default margin: 2 × 100 ppm of the lease (two clocks drifting apart at ±100 ppm each), rounded
// up to a millisecond, plus one loop interval (the lease-check thread's period).
int64_t DefaultSafetyMarginMs(int64_t lease_ms, int64_t loop_interval_ms);

// How long one renew call may take when `lease_left` of the local lease is left: half of it (at
// least 1 ms, never more than is left; zero once it has run out).
Duration RenewCallBudget(Duration lease_left);

// Checks options; InvalidConfig names the field (node_id empty, lease_ms <= 0, margin ≥ lease…).
Status ValidateLeaderElectorOptions(const LeaderElectorOptions& options);

struct LeaderElectorCallbacks {
  // Runs on kvc_transition while PROMOTING, with the term's fencing token as granted. When it
  // returns the node becomes LEADER (unless a demotion arrived meanwhile; then OnNoLongerLeader
  // follows). It may replace the term's token through RaiseTokenAbove(); compare tokens of the
  // term with what that returned, not with this argument.
  std::function<void(FencingToken token)> on_become_leader;
  // Runs on kvc_transition while DEMOTING; when it returns the node is FOLLOWER.
  std::function<void()> on_no_longer_leader;
  // Told every state the node enters (PROMOTING, LEADER, DEMOTING, FOLLOWER) with the term's token
  // (0 for FOLLOWER), on kvc_transition right after the change, with no lock held. For observers
  // (metrics, the simulator's records): it must not block or call back into the elector.
  std::function<void(ElectorState state, FencingToken token)> on_state;
};

// What a node knows about leadership at one moment (GetManagerClusterInfo and friends).
struct LeadershipSnapshot {
  ElectorState state = ElectorState::kFollower;
  bool is_leader = false;              // what IsLeader() answered at `taken_at`
  FencingToken token = 0;              // of this node's current term; 0 when not in one
  std::optional<MonoTime> lease_deadline;   // local deadline of this node's term
  std::optional<WallTime> lease_deadline_wall;  // the same as wall time, for humans
  std::string observed_leader_id;      // lock holder seen by the last campaign ("" = none/unknown)
  std::optional<MonoTime> observed_leader_at;  // when that campaign read it (nullopt: never)
  MonoTime taken_at{};
  // When the lock thread last began a round and the lease-check thread last woke (nullopt before
  // the first); a stale tick means a thread is stuck (health checks).
  std::optional<MonoTime> lock_loop_tick;
  std::optional<MonoTime> lease_check_tick;
};

class LeaderElector {
 public:
  // `runtime` and `backend` must outlive the elector. Options are checked by Start().
  LeaderElector(Runtime& runtime, CoordinationBackend& backend, LeaderElectorOptions options,
                LeaderElectorCallbacks callbacks);
  ~LeaderElector();  // calls Stop()
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Replaces the callbacks given to the constructor; upstream registers its handlers on an elector
  // it has already built. Only while stopped (the threads read the callbacks without a lock):
  // AlreadyExists, changing nothing, between Start() and the end of Stop().
  Status SetCallbacks(LeaderElectorCallbacks callbacks);

  // Validates the options and starts the three threads. InvalidConfig names a bad field.
  Status Start();
  // Stops campaigning; a leader releases the lock and runs OnNoLongerLeader before this returns.
  // Idempotent; Start may be called again afterwards. Must not be called from a callback (it joins
  // the thread running the callbacks).
  void Stop();

  // True only in LEADER state, in the current term, before the lease deadline.
  bool IsLeader();
  ElectorState state();
  // Fencing token of the current term when IsLeader(), else 0.
  FencingToken CurrentToken();
  LeadershipSnapshot Snapshot();

  // Admin demote: ends this node's term at once (IsLeader() is false when this returns), releases
  // the lock and queues the demote path; the node will not campaign for `forbid_campaign` (default:
  // options.forbid_campaign_time_ms). NotLeader (nothing changed) when this node holds no term.
  // If the lock cannot be released the node is still demoted and the error says so (the lock then
  // expires on the backend within a lease).
  Status Demote(std::optional<Duration> forbid_campaign = std::nullopt);

  // Fencing floor (see the top of this file): makes the term whose token is `term_token` — the
  // token on_become_leader got, or what an earlier call returned — fence with a token strictly
  // greater than `floor`, the newest token the fenced resource has seen. Returns `term_token` when
  // it already is (no backend call); otherwise the backend's RaiseTokenFloor answer, which the term
  // adopts as its token. Meant for on_become_leader (PROMOTING, before the data plane opens).
  // Errors: NotLeader when no term with `term_token` is held (ended, or another term began);
  // kLockLost when the backend says the lock is not ours (the term then ends); the backend's own
  // error otherwise (the term goes on; the caller retries — a lost reply only burns a token).
  Result<FencingToken> RaiseTokenAbove(FencingToken term_token, FencingToken floor);

  // Waits (through the runtime) until state() == `state` or `deadline`; true if reached.
  bool WaitForState(ElectorState state, MonoTime deadline);

  const LeaderElectorOptions& options() const { return options_; }
  Duration safety_margin() const { return margin_; }

 private:
  void LockLoop();
  void LeaseCheckLoop();
  void TransitionLoop();
  void Campaign();
  // One renewal; returns when the next lock-thread round should begin.
  MonoTime Renew(MonoTime round_start);
  // Deadline of an Unlock call made now.
  MonoTime UnlockDeadline();
  // Ends the current term (lease expiry, lost lock, Demote, Stop); caller holds mu_.
  void EndTermLocked(std::string_view why) REQUIRES(mu_);
  MonoTime DeadlineFor(MonoTime before_request, MonoTime after_response) const;
  bool IsLeaderLocked(MonoTime now) REQUIRES(mu_);
  // Tells callbacks_.on_state, releasing mu_ around the call.
  void NotifyState(ElectorState state, FencingToken token) REQUIRES(mu_);

  Runtime& runtime_;
  CoordinationBackend& backend_;
  const LeaderElectorOptions options_;
  // Written only while no thread runs (SetCallbacks when stopped); Spawn orders it before the reads.
  LeaderElectorCallbacks callbacks_;
  Duration lease_{0};
  Duration loop_interval_{0};
  Duration margin_{0};

  Mutex mu_;
  CondVar changed_;  // any of the fields below changed
  bool started_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  // Bumped whenever a term starts or ends; a backend answer from an older epoch is discarded.
  uint64_t epoch_ GUARDED_BY(mu_) = 0;
  // The lock thread's view: this node holds the lock for term `term_`.
  bool holding_ GUARDED_BY(mu_) = false;
  uint64_t term_ GUARDED_BY(mu_) = 0;
  FencingToken token_ GUARDED_BY(mu_) = 0;
  MonoTime lease_deadline_ GUARDED_BY(mu_){};
  MonoTime forbid_campaign_until_ GUARDED_BY(mu_){};
  std::string observed_leader_id_ GUARDED_BY(mu_);
  std::optional<MonoTime> observed_leader_at_ GUARDED_BY(mu_);
  std::optional<MonoTime> lock_loop_tick_ GUARDED_BY(mu_);
  std::optional<MonoTime> lease_check_tick_ GUARDED_BY(mu_);
  // The transition thread's view: the state and the term LEADER/PROMOTING serve.
  ElectorState state_ GUARDED_BY(mu_) = ElectorState::kFollower;
  uint64_t serving_term_ GUARDED_BY(mu_) = 0;
  bool transition_done_ GUARDED_BY(mu_) = false;

  Thread lock_thread_;
  Thread check_thread_;
  Thread transition_thread_;
};

}  // namespace kvchaos::election
