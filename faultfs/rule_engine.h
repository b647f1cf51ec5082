// RuleEngine: the live rule set of a faultfs mount and the decision, for each call, of which rules
// hit it. A decision is a pure function of (seed, rule id, that rule's match count): each rule
// counts the calls it matches (path glob, op, time window) and derives the call's random stream as
// Rng(seed).Split(HashName(id)).Split(count), so no shared RNG is consumed by whichever thread
// comes first, and the same operation sequence with the same seed gives the same faults.
//
// Latency and hangs are slept here on a condition variable whose mutex is released while waiting:
// a slow call never holds anything another call needs. Other actions come back to the caller (the
// FUSE passthrough, or the simulator's disk) in a CallPlan, since they act on the call's data.
// Time windows, sleeps and hangs go through the engine's kvchaos::Runtime, so the simulator runs
// this engine on virtual time.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/rng.h"
#include "core/common/runtime.h"
#include "core/common/status.h"
#include "faultfs/fault_log.h"
#include "faultfs/rule.h"

namespace kvchaos::faultfs {

// What a call is: its op, the path inside the mount, and the byte range for reads and writes.
struct CallInfo {
  Op op;
  std::string_view path;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// A rule's live state: its counters survive while the rule is installed.
struct RuleState {
  RuleState(Rule r, const Rng& seed_rng, MonoTime now)
      : rule(std::move(r)), rng(seed_rng.Split(HashName(rule.id))), installed(now) {}
  const Rule rule;
  const Rng rng;          // this rule's stream; call k uses rng.Split(k)
  const MonoTime installed;
  std::atomic<uint64_t> matched{0};
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> release_gen{0};  // bumped by a release naming this rule
  std::atomic<int64_t> hung{0};          // calls blocked by this rule right now
  // Set (under RuleEngine::wait_mu_) when the rule is removed: a call that planned a hang just
  // before the removal must not start waiting for a release nobody can name any more.
  std::atomic<bool> removed{false};
};

struct Hit {
  std::shared_ptr<RuleState> state;
  uint64_t match = 0;  // the rule's match count of this call (1-based)
  Rng rng{0};          // the call's own stream, after the hit draw
};

struct CallPlan {
  std::vector<Hit> delays;   // latency and hang hits, in rule order
  std::optional<Hit> action; // the first hit of any other action
  bool track_unsynced = false;  // a drop_unsynced rule matches this write or create
  bool need_dir_sync = false;   // ... and one of them has dir_sync: true
  bool empty() const { return delays.empty() && !action && !track_unsynced; }
};

class RuleEngine {
 public:
  RuleEngine(uint64_t seed, FaultLog* log, Runtime& runtime = Runtime::Real());

  // Installs rules; fails (changing nothing) on a duplicate id.
  Status Add(std::vector<Rule> rules);
  Status Remove(const std::string& id);
  void Clear();
  std::vector<Rule> List() const;
  void SetEnabled(bool enabled) { enabled_.store(enabled, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  uint64_t seed() const { return seed_; }

  // True when some rule could hit a call: the passthrough's fast path skips everything else.
  bool Active() const { return rule_count_.load(std::memory_order_acquire) > 0 && enabled(); }
  // True when some installed rule's glob matches `path` (used to choose direct I/O at open).
  bool AnyRuleMatchesPath(std::string_view path) const;

  CallPlan Plan(const CallInfo& call);
  // Sleeps the latency hits and blocks on the hang hits of `plan`, logging each.
  void RunDelays(const CallPlan& plan, const CallInfo& call);

  // Releases hung calls (of rule `id` only, when given); returns how many were hung.
  Result<int64_t> Release(const std::string& id);
  // Releases every hang and cuts every sleep short, for good (shutdown).
  void Shutdown();

  // Appends a fault line for `hit` with action details.
  void LogFault(const CallInfo& call, const Hit& hit, nlohmann::json detail);
  void LogEvent(nlohmann::json record);
  FaultLog* log() const { return log_; }

  // Per-op accounting of every call, faulted or not.
  void CountOp(Op op, int err, Duration latency);
  nlohmann::json Stats() const;

 private:
  using RuleList = std::vector<std::shared_ptr<RuleState>>;
  std::shared_ptr<const RuleList> Snapshot() const;
  // Installs `next` as the live list (rules_mu_ held).
  void PublishLocked(std::shared_ptr<const RuleList> next);
  bool Decide(RuleState& state, uint64_t match, Rng& rng);
  Duration DrawLatency(const Rule& rule, Rng& rng) const;

  const uint64_t seed_;
  const Rng seed_rng_;
  FaultLog* const log_;
  std::atomic<bool> enabled_{true};
  std::atomic<size_t> rule_count_{0};

  mutable std::mutex rules_mu_;
  std::shared_ptr<const RuleList> rules_;  // replaced, never mutated (guarded by rules_mu_)
  // What calls read: the same list as rules_, without a lock or a reference count. Lists that
  // were live once are kept in retired_ until the engine goes, so a call still walking one
  // never sees it freed (rule changes are rare and small; calls are many).
  std::atomic<const RuleList*> live_{nullptr};
  std::vector<std::shared_ptr<const RuleList>> retired_;  // guarded by rules_mu_

  // Sleeps and hangs wait here; the mutex is held only to check and change the flags below.
  Runtime& runtime_;
  Mutex wait_mu_;
  CondVar wait_cv_;
  uint64_t release_gen_ GUARDED_BY(wait_mu_) = 0;
  bool shutdown_ GUARDED_BY(wait_mu_) = false;

  struct OpCounters {
    std::atomic<uint64_t> calls{0};
    std::atomic<uint64_t> errors{0};
    std::atomic<uint64_t> latency_ns_total{0};
    std::atomic<uint64_t> latency_ns_max{0};
  };
  std::array<OpCounters, kOpCount> ops_;
  std::atomic<uint64_t> faults_{0};
};

}  // namespace kvchaos::faultfs
