// LeaderElector: the state machine and its three threads (see the header for the rules).
// Control flow: the lock thread and the lease-check thread only ever start or end a *term*
// (holding_, term_, epoch_); the transition thread alone moves state_ towards "LEADER of the
// current term" or "FOLLOWER" and runs the callbacks. Backend calls are made without mu_ held.
#include "core/election/leader_elector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>

#include "core/common/assert.h"

namespace kvchaos::election {

std::string_view ElectorStateName(ElectorState state) {
  switch (state) {
    case ElectorState::kFollower:
      return "FOLLOWER";
    case ElectorState::kPromoting:
      return "PROMOTING";
    case ElectorState::kLeader:
      return "LEADER";
    case ElectorState::kDemoting:
      return "DEMOTING";
  }
  return "UNKNOWN";
}

namespace {

// The elector's one cycle: FOLLOWER → PROMOTING → LEADER → DEMOTING → FOLLOWER. Every change of
// state_ goes through here; any other step is a bug in the transition loop.
ElectorState Transition(ElectorState from, ElectorState to) {
  const bool allowed = (from == ElectorState::kFollower && to == ElectorState::kPromoting) ||
                       (from == ElectorState::kPromoting && to == ElectorState::kLeader) ||
                       (from == ElectorState::kLeader && to == ElectorState::kDemoting) ||
                       (from == ElectorState::kDemoting && to == ElectorState::kFollower);
  KVCHAOS_ASSERT(allowed, "leader elector went from " + std::string(ElectorStateName(from)) + " to " +
                              std::string(ElectorStateName(to)));
  return to;
}

}  // namespace

int64_t DefaultSafetyMarginMs(int64_t lease_ms, int64_t loop_interval_ms) {
  // Two clocks each off by up to 100 ppm drift apart by up to 200 ppm of the lease.
  const int64_t drift_ms = (lease_ms * 200 + 999'999) / 1'000'000;
  return drift_ms + loop_interval_ms;
}

Status ValidateLeaderElectorOptions(const LeaderElectorOptions& o) {
  if (Status s = ValidateKey("leader_elector.node_id", o.node_id); !s.ok()) {
    return Status::InvalidConfig(s.message());
  }
  if (Status s = ValidateKey("leader_elector.lock_key", o.lock_key); !s.ok()) {
    return Status::InvalidConfig(s.message());
  }
  if (o.lease_ms <= 0) {
    return Status::InvalidConfig("leader_elector.lease_ms: must be > 0, got " + std::to_string(o.lease_ms));
  }
  if (o.loop_interval_ms <= 0 || o.loop_interval_ms >= o.lease_ms) {
    return Status::InvalidConfig("leader_elector.loop_interval_ms: must be > 0 and < lease_ms (" +
                                 std::to_string(o.lease_ms) + "), got " + std::to_string(o.loop_interval_ms));
  }
  if (o.safety_margin_ms < -1) {
    return Status::InvalidConfig("leader_elector.safety_margin_ms: must be >= 0 (or -1 for the default), got " +
                                 std::to_string(o.safety_margin_ms));
  }
  const int64_t margin =
      o.safety_margin_ms < 0 ? DefaultSafetyMarginMs(o.lease_ms, o.loop_interval_ms) : o.safety_margin_ms;
  if (margin >= o.lease_ms) {
    return Status::InvalidConfig("leader_elector.safety_margin_ms: the margin (" + std::to_string(margin) +
                                 " ms) must be less than lease_ms (" + std::to_string(o.lease_ms) +
                                 "), or no lease would ever be valid");
  }
  if (o.forbid_campaign_time_ms < 0) {
    return Status::InvalidConfig("leader_elector.forbid_campaign_time_ms: must be >= 0, got " +
                                 std::to_string(o.forbid_campaign_time_ms));
  }
  return Status::Ok();
}

LeaderElector::LeaderElector(Runtime& runtime, CoordinationBackend& backend, LeaderElectorOptions options,
                             LeaderElectorCallbacks callbacks)
    : runtime_(runtime),
      backend_(backend),
      options_(std::move(options)),
      callbacks_(std::move(callbacks)),
      mu_(runtime),
      changed_(runtime) {
  lease_ = Millis(options_.lease_ms);
  loop_interval_ = Millis(options_.loop_interval_ms);
  const int64_t margin_ms = options_.safety_margin_ms < 0
                                ? DefaultSafetyMarginMs(options_.lease_ms, options_.loop_interval_ms)
                                : options_.safety_margin_ms;
  margin_ = options_.testing.no_safety_margin ? Duration::zero() : Millis(margin_ms);
}

LeaderElector::~LeaderElector() { Stop(); }

Status LeaderElector::SetCallbacks(LeaderElectorCallbacks callbacks) {
  MutexLock lock(mu_);
  if (started_) {
    return Status(StatusCode::kAlreadyExists, "leader elector of node '" + options_.node_id +
                                                  "' is running; set its callbacks before Start or after Stop");
  }
  callbacks_ = std::move(callbacks);
  return Status::Ok();
}

Status LeaderElector::Start() {
  KVCHAOS_RETURN_IF_ERROR(ValidateLeaderElectorOptions(options_));
  {
    MutexLock lock(mu_);
    if (started_) {
      return Status(StatusCode::kAlreadyExists, "leader elector of node '" + options_.node_id + "' already started");
    }
    started_ = true;
  }
  const auto& t = options_.testing;
  if (t.no_safety_margin || t.lease_from_response || t.serve_while_demoting) {
    spdlog::warn("leader elector '{}': TESTING KNOBS ON (no_safety_margin={} lease_from_response={} "
                 "serve_while_demoting={}): leadership is unsafe",
                 options_.node_id, t.no_safety_margin, t.lease_from_response, t.serve_while_demoting);
  }
  spdlog::info("leader elector '{}' starting on {} (lock '{}', lease {} ms, loop {} ms, margin {} ms)", options_.node_id,
               backend_.Describe(), options_.lock_key, options_.lease_ms, options_.loop_interval_ms, ToMillis(margin_));
  transition_thread_ = runtime_.Spawn("kvc_transition", [this] { TransitionLoop(); });
  check_thread_ = runtime_.Spawn("kvc_lease_check", [this] { LeaseCheckLoop(); });
  lock_thread_ = runtime_.Spawn("kvc_lease_lock", [this] { LockLoop(); });
  return Status::Ok();
}

void LeaderElector::Stop() {
  bool release = false;
  {
    MutexLock lock(mu_);
    if (!started_ || stopping_) return;
    stopping_ = true;
    release = holding_;
    EndTermLocked("elector stopping");
    ++epoch_;  // also voids a campaign in flight that has not won yet
    changed_.NotifyAll();
  }
  lock_thread_.Join();
  check_thread_.Join();
  if (release) {
    Status s = backend_.Unlock(options_.lock_key, options_.node_id, UnlockDeadline());
    if (!s.ok() && s.code() != StatusCode::kLockLost) {
      spdlog::warn("leader elector '{}': could not release lock on stop (it expires within a lease): {}",
                   options_.node_id, s.ToString());
    }
  }
  transition_thread_.Join();
  {
    // Every thread is joined: Start may run again (as upstream's elector allows), with new terms
    // and tokens.
    MutexLock lock(mu_);
    started_ = false;
    stopping_ = false;
  }
  spdlog::info("leader elector '{}' stopped", options_.node_id);
}

MonoTime LeaderElector::DeadlineFor(MonoTime before_request, MonoTime after_response) const {
  // The backend started its lease no earlier than our request left, so counting from
  // `before_request` ends our lease no later than the backend's (drift aside; the margin covers it).
  if (options_.testing.lease_from_response) return after_response + lease_ - margin_;
  return before_request + lease_ - margin_;
}

void LeaderElector::EndTermLocked(std::string_view why) {
  if (!holding_) return;
  holding_ = false;
  ++epoch_;
  spdlog::info("leader elector '{}': term {} (token {}) ended: {}", options_.node_id, term_, token_, why);
  changed_.NotifyAll();
}

bool LeaderElector::IsLeaderLocked(MonoTime now) {
  if (options_.testing.serve_while_demoting) {
    return state_ == ElectorState::kLeader || state_ == ElectorState::kDemoting;
  }
  return state_ == ElectorState::kLeader && holding_ && serving_term_ == term_ && now < lease_deadline_;
}

bool LeaderElector::IsLeader() {
  MutexLock lock(mu_);
  return IsLeaderLocked(runtime_.Now());
}

ElectorState LeaderElector::state() {
  MutexLock lock(mu_);
  return state_;
}

FencingToken LeaderElector::CurrentToken() {
  MutexLock lock(mu_);
  return IsLeaderLocked(runtime_.Now()) ? token_ : 0;
}

LeadershipSnapshot LeaderElector::Snapshot() {
  MutexLock lock(mu_);
  LeadershipSnapshot s;
  s.taken_at = runtime_.Now();
  s.state = state_;
  s.is_leader = IsLeaderLocked(s.taken_at);
  s.observed_leader_id = observed_leader_id_;
  s.observed_leader_at = observed_leader_at_;
  s.lock_loop_tick = lock_loop_tick_;
  s.lease_check_tick = lease_check_tick_;
  if (holding_) {
    s.token = token_;
    s.lease_deadline = lease_deadline_;
    s.lease_deadline_wall = runtime_.WallNow() + (lease_deadline_ - s.taken_at);
  }
  return s;
}

bool LeaderElector::WaitForState(ElectorState state, MonoTime deadline) {
  MutexLock lock(mu_);
  while (state_ != state) {
    if (!changed_.WaitUntil(mu_, deadline)) return state_ == state;
  }
  return true;
}

Status LeaderElector::Demote(std::optional<Duration> forbid_campaign) {
  const Duration forbid = forbid_campaign.value_or(Millis(options_.forbid_campaign_time_ms));
  if (forbid < Duration::zero()) {
    return Status::InvalidArgument("forbid_campaign_time_ms must be >= 0, got " + std::to_string(ToMillis(forbid)));
  }
  {
    MutexLock lock(mu_);
    if (!started_ || stopping_ || !holding_) {
      return Status::NotLeader("node '" + options_.node_id + "' is not the leader (state " +
                               std::string(ElectorStateName(state_)) + "); nothing to demote");
    }
    // Set before the term ends so a campaign in flight sees it (its epoch is stale anyway).
    forbid_campaign_until_ = runtime_.Now() + forbid;
    EndTermLocked("admin demote (no campaign for " + std::to_string(ToMillis(forbid)) + " ms)");
  }
  Status s = backend_.Unlock(options_.lock_key, options_.node_id, UnlockDeadline());
  if (!s.ok() && s.code() != StatusCode::kLockLost) {
    return Status(s.code(), "node '" + options_.node_id +
                                "' demoted, but the lock could not be released (it expires within lease_ms): " +
                                s.message());
  }
  return Status::Ok();
}

Result<FencingToken> LeaderElector::RaiseTokenAbove(FencingToken term_token, FencingToken floor) {
  uint64_t epoch = 0;
  MonoTime lease_deadline{};
  {
    MutexLock lock(mu_);
    if (!holding_ || token_ != term_token) {
      return Status::NotLeader("node '" + options_.node_id + "' holds no term with fencing token " +
                               std::to_string(term_token));
    }
    if (term_token > floor) return term_token;
    epoch = epoch_;
    lease_deadline = lease_deadline_;
  }
  // An answer after the term's lease could not be used: the term may be over by then.
  Result<FencingToken> raised = backend_.RaiseTokenFloor(options_.lock_key, options_.node_id, floor, lease_deadline);
  MutexLock lock(mu_);
  const bool same_term = !stopping_ && epoch == epoch_ && holding_ && token_ == term_token;
  if (!raised.ok()) {
    if (raised.status().code() == StatusCode::kLockLost && same_term) {
      EndTermLocked("lock lost while raising the fencing token above " + std::to_string(floor) + ": " +
                    raised.status().message());
    }
    return raised.status().WithContext("raising the fencing token of term " + std::to_string(term_) + " above " +
                                       std::to_string(floor));
  }
  if (!same_term) {
    // Demote, Stop or lease expiry while the request was in flight: the raised token belongs to
    // a holding that is over (or to a term this one must not take over).
    return Status::NotLeader("node '" + options_.node_id + "': the term of token " + std::to_string(term_token) +
                             " ended while its token was being raised");
  }
  if (*raised <= floor) {
    return Status::Unavailable("backend " + backend_.Describe() + " raised the fencing token to " +
                               std::to_string(*raised) + ", not above " + std::to_string(floor));
  }
  spdlog::warn("leader elector '{}': term {} was granted token {}, not above the fenced resource's newest {} (the "
               "backend lost its counter?); the term fences with token {} instead",
               options_.node_id, term_, term_token, floor, *raised);
  token_ = *raised;
  changed_.NotifyAll();
  return *raised;
}

void LeaderElector::LockLoop() {
  while (true) {
    const MonoTime start = runtime_.Now();
    bool holding = false;
    {
      MutexLock lock(mu_);
      if (stopping_) return;
      holding = holding_;
      lock_loop_tick_ = start;
    }
    // One round per loop interval; a renewal that failed asks for the next one sooner (Renew).
    MonoTime next_round = start + loop_interval_;
    if (holding) {
      next_round = Renew(start);
    } else {
      Campaign();
    }
    MutexLock lock(mu_);
    while (!stopping_ && changed_.WaitUntil(mu_, next_round)) {
    }
    if (stopping_) return;
  }
}

void LeaderElector::Campaign() {
  uint64_t epoch = 0;
  {
    MutexLock lock(mu_);
    if (runtime_.Now() < forbid_campaign_until_) return;
    epoch = epoch_;
  }
  // A campaign is given the usable lease per call: a grant answered later could not start a term.
  Result<LockHolderInfo> holder = backend_.GetLockHolder(options_.lock_key, runtime_.Now() + lease_ - margin_);
  if (!holder.ok()) {
    spdlog::warn("leader elector '{}': cannot read the lock holder: {}", options_.node_id, holder.status().ToString());
    return;
  }
  {
    MutexLock lock(mu_);
    observed_leader_id_ = holder->holder;
    observed_leader_at_ = runtime_.Now();
  }
  // Held by us on the backend while we hold no term (restart, or our lease ran out locally): we
  // still go through TryLock, whose re-entry restarts the lease on *our* clock with a new token.
  // The remaining TTL the backend reports is on its clock and is never used as our deadline.
  if (!holder->holder.empty() && holder->holder != options_.node_id) return;

  const MonoTime before = runtime_.Now();
  Result<LockGrant> grant = backend_.TryLock(options_.lock_key, options_.node_id, lease_, before + lease_ - margin_);
  const MonoTime after = runtime_.Now();
  bool release = false;
  {
    MutexLock lock(mu_);
    if (!grant.ok()) {
      if (grant.status().code() == StatusCode::kAlreadyExists) {
        spdlog::debug("leader elector '{}': {}", options_.node_id, grant.status().message());
      } else {
        spdlog::warn("leader elector '{}': TryLock failed: {}", options_.node_id, grant.status().ToString());
      }
      return;
    }
    const MonoTime deadline = DeadlineFor(before, after);
    const MonoTime now = runtime_.Now();
    if (stopping_ || epoch != epoch_ || before < forbid_campaign_until_) {
      // A Demote or Stop happened while the request was in flight: this grant must not start a term.
      release = true;
      spdlog::info("leader elector '{}': lock granted (token {}) after a demote/stop; releasing it", options_.node_id,
                   grant->token);
    } else if (deadline <= now) {
      spdlog::warn("leader elector '{}': TryLock took {} ms, longer than the usable lease; not starting a term",
                   options_.node_id, ToMillis(after - before));
    } else {
      ++epoch_;
      ++term_;
      holding_ = true;
      token_ = grant->token;
      lease_deadline_ = deadline;
      observed_leader_id_ = options_.node_id;
      observed_leader_at_ = now;
      spdlog::info("leader elector '{}': won term {} with token {}; lease valid for {} ms", options_.node_id, term_,
                   token_, ToMillis(deadline - now));
      changed_.NotifyAll();
    }
  }
  if (release) {
    Status s = backend_.Unlock(options_.lock_key, options_.node_id, UnlockDeadline());
    if (!s.ok() && s.code() != StatusCode::kLockLost) {
      spdlog::warn("leader elector '{}': could not release a stale grant: {}", options_.node_id, s.ToString());
    }
  }
}

MonoTime LeaderElector::UnlockDeadline() {
  // The lock expires on its own within a lease of the last renewal: waiting longer gains nothing.
  return runtime_.Now() + lease_;
}

Duration RenewCallBudget(Duration lease_left) {
  // Half the time left: while the backend stays silent, calls come closer together towards the
  // deadline, each with at least half the time the one before had, so an outage that ends T before
  // the deadline still meets a call with T/2 or more left. The floor bounds the number of calls.
  constexpr Duration kMinBudget = std::chrono::milliseconds(1);
  if (lease_left <= Duration::zero()) return Duration::zero();
  return std::max(lease_left / 2, std::min(lease_left, kMinBudget));
}

MonoTime LeaderElector::Renew(MonoTime round_start) {
  const MonoTime next_tick = round_start + loop_interval_;
  uint64_t epoch = 0;
  MonoTime lease_deadline{};
  {
    MutexLock lock(mu_);
    if (!holding_) return next_tick;
    epoch = epoch_;
    lease_deadline = lease_deadline_;
  }
  // Simulator hook: a lock thread that misses a renewal (scheduling stall, GC-like pause).
  if (runtime_.Buggify("election.renew.skip")) return next_tick;
  const MonoTime before = runtime_.Now();
  // Nothing can renew a lease that has run out (the lease-check thread ends the term).
  const Duration budget = RenewCallBudget(lease_deadline - before);
  if (budget <= Duration::zero()) return next_tick;
  // The call's deadline lies within the local lease whatever the backend's timeout and retries.
  Status s = backend_.RenewLock(options_.lock_key, options_.node_id, lease_, before + budget);
  const MonoTime after = runtime_.Now();
  MutexLock lock(mu_);
  if (stopping_ || epoch != epoch_) {
    // The term ended (Demote, lease expiry) while the renewal was in flight; a late success must
    // not revive it — the lock may already be deleted or granted to another node.
    return next_tick;
  }
  const MonoTime now = runtime_.Now();
  if (s.ok()) {
    if (now >= lease_deadline_) {
      EndTermLocked("renewal answered after the lease deadline");
      return next_tick;
    }
    lease_deadline_ = std::max(lease_deadline_, DeadlineFor(before, after));
    changed_.NotifyAll();
    return next_tick;
  }
  if (s.code() == StatusCode::kLockLost) {
    EndTermLocked("lock lost: " + s.message());
    return next_tick;
  }
  // Transient: keep renewing; the lease-check thread ends the term at the deadline. The next call
  // leaves at once after a call that used its budget, and no later than the budget after this one
  // left when it failed fast (a refused connection), so calls keep closing in on the deadline.
  spdlog::warn("leader elector '{}': renew failed ({} ms of lease left): {}", options_.node_id,
               ToMillis(lease_deadline_ - now), s.ToString());
  return std::min(next_tick, before + budget);
}

void LeaderElector::LeaseCheckLoop() {
  MutexLock lock(mu_);
  while (!stopping_) {
    const MonoTime now = runtime_.Now();
    lease_check_tick_ = now;
    if (holding_ && now >= lease_deadline_) {
      EndTermLocked("lease expired locally (no renewal in time)");
    }
    MonoTime wake = now + loop_interval_;
    if (holding_ && lease_deadline_ < wake) wake = lease_deadline_;
    changed_.WaitUntil(mu_, wake);
  }
}

void LeaderElector::NotifyState(ElectorState state, FencingToken token) {
  if (!callbacks_.on_state) return;
  // The transition loop re-reads every field after this, so letting go of mu_ here is safe.
  mu_.Unlock();
  callbacks_.on_state(state, token);
  mu_.Lock();
}

void LeaderElector::TransitionLoop() {
  mu_.Lock();
  while (true) {
    const bool term_live = holding_;
    if (state_ == ElectorState::kFollower && term_live) {
      const uint64_t term = term_;
      const FencingToken token = token_;
      state_ = Transition(state_, ElectorState::kPromoting);
      serving_term_ = term;
      changed_.NotifyAll();
      spdlog::info("leader elector '{}': PROMOTING (term {}, token {})", options_.node_id, term, token);
      NotifyState(ElectorState::kPromoting, token);
      mu_.Unlock();
      if (callbacks_.on_become_leader) callbacks_.on_become_leader(token);
      mu_.Lock();
      if (holding_ && term_ == term) {
        state_ = Transition(state_, ElectorState::kLeader);
        changed_.NotifyAll();
        // token_, not `token`: the callback may have raised it (RaiseTokenAbove).
        spdlog::info("leader elector '{}': LEADER (term {}, token {})", options_.node_id, term, token_);
        NotifyState(ElectorState::kLeader, token_);
        continue;
      }
      // The term ended while promoting: fall through to the demote path below at once.
      spdlog::info("leader elector '{}': term {} ended while PROMOTING; demoting", options_.node_id, term);
      state_ = Transition(state_, ElectorState::kLeader);
    }
    if (state_ == ElectorState::kLeader && !(holding_ && serving_term_ == term_)) {
      state_ = Transition(state_, ElectorState::kDemoting);
      changed_.NotifyAll();
      spdlog::info("leader elector '{}': DEMOTING (term {})", options_.node_id, serving_term_);
      NotifyState(ElectorState::kDemoting, token_);
      mu_.Unlock();
      if (callbacks_.on_no_longer_leader) callbacks_.on_no_longer_leader();
      mu_.Lock();
      state_ = Transition(state_, ElectorState::kFollower);
      serving_term_ = 0;
      changed_.NotifyAll();
      spdlog::info("leader elector '{}': FOLLOWER", options_.node_id);
      NotifyState(ElectorState::kFollower, 0);
      continue;
    }
    if (stopping_ && state_ == ElectorState::kFollower && !holding_) break;
    changed_.Wait(mu_);
  }
  transition_done_ = true;
  mu_.Unlock();
}

}  // namespace kvchaos::election
