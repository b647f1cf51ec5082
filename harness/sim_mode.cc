// Sim mode of `kvchaos run`; see sim_mode.h. The mapping from scenario faults to simulator fault
// actions lives here (not in sim/) so the simulator keeps its own small fault vocabulary.
#include "harness/sim_mode.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>

#include "core/common/json_text.h"
#include "faultfs/rule_parser.h"
#include "harness/elector_settings.h"
#include "harness/history_result.h"
#include "harness/runner_expectations.h"
#include "harness/run_result_start.h"
#include "harness/timeline.h"

namespace kvchaos::harness {
namespace {

constexpr int64_t kMsNs = 1'000'000;
using SimAction = sim::FaultAction;
using sim::FaultKind;

int64_t Ns(Duration d) { return d.count(); }

// The action that ends a fault given without `for`: a later restart/resume/heal of the same node.
bool Undoes(const FaultEvent& undo, const FaultEvent& fault) {
  switch (fault.action) {
    case FaultAction::kCrash:
    case FaultAction::kStop:
      return undo.action == FaultAction::kRestart && (undo.node == fault.node || undo.node.kind == NodeRef::Kind::kAll);
    case FaultAction::kPause:
      return undo.action == FaultAction::kResume && (undo.node == fault.node || undo.node.kind == NodeRef::Kind::kAll);
    case FaultAction::kPartition:
    case FaultAction::kCoordinationOutage:
    case FaultAction::kNetwork:
      return undo.action == FaultAction::kHeal;
    default:
      return false;
  }
}

// Node targets: one simulator action per node for `all`, resolved-at-fire-time flags otherwise.
// The links a partition or network fault acts on, in the simulator's terms.
sim::PartitionPeers PeersOf(PartitionFrom from) {
  switch (from) {
    case PartitionFrom::kNodes:
      return sim::PartitionPeers::kApiPeers;
    case PartitionFrom::kAll:
      return sim::PartitionPeers::kAll;
    case PartitionFrom::kPeers:
      return sim::PartitionPeers::kEtcdPeers;
    case PartitionFrom::kCoordination:
      break;
  }
  return sim::PartitionPeers::kCoordination;
}

std::vector<SimAction> ForNodes(const Scenario& s, const FaultEvent& f, SimAction base) {
  std::vector<SimAction> out;
  switch (f.node.kind) {
    case NodeRef::Kind::kIndex:
      base.node = f.node.index;
      out.push_back(base);
      break;
    case NodeRef::Kind::kLeader:
      base.target_leader = true;
      out.push_back(base);
      break;
    case NodeRef::Kind::kFollower:
      base.target_follower = true;
      out.push_back(base);
      break;
    case NodeRef::Kind::kAll:
    case NodeRef::Kind::kCoordination:  // callers map coordination targets before this
      for (int n = 0; n < s.topology.nodes; ++n) {
        base.node = n;
        out.push_back(base);
      }
      break;
  }
  return out;
}

Result<std::vector<SimAction>> MapFault(const Scenario& s, const FaultEvent& f, int64_t t_ns, int64_t length_ns) {
  SimAction a;
  a.t = t_ns;
  a.duration_ns = length_ns;
  std::vector<SimAction> out;
  const bool on_coordination = f.node.kind == NodeRef::Kind::kCoordination;
  if (f.action == FaultAction::kStoreFault || f.action == FaultAction::kStoreCrash) {
    // The loader checks this; a scenario built in code must still not run as if it applied.
    const auto& backends = s.topology.backends;
    const bool known = f.backend == "all" ? !backends.empty()
                                          : std::any_of(backends.begin(), backends.end(),
                                                        [&](const StoreBackend& b) { return b.name == f.backend; });
    if (!known) {
      return Status::InvalidConfig(s.file + ":" + std::to_string(f.line) + ": action: " +
                                   std::string(FaultActionName(f.action)) + ": backend '" + f.backend +
                                   "' is not one of topology.backends, so the simulated disk has no such mount");
    }
  }
  switch (f.action) {
    case FaultAction::kCrash:
      a.kind = FaultKind::kCrash;
      return ForNodes(s, f, a);
    case FaultAction::kPause:
      a.kind = FaultKind::kPause;
      return ForNodes(s, f, a);
    case FaultAction::kPartition:
      a.kind = FaultKind::kPartition;
      a.peers = PeersOf(f.partition_from);
      a.member = f.coordination_member;  // etcd: the link to that one member only
      a.variant = f.partition_direction == PartitionDirection::kBoth       ? 0
                  : f.partition_direction == PartitionDirection::kOutbound ? 1
                                                                           : 2;
      if (f.partition_from == PartitionFrom::kPeers) {
        // An etcd member cut from the other members: no node is involved.
        a.node = -1;
        out.push_back(a);
        return out;
      }
      return ForNodes(s, f, a);
    case FaultAction::kCoordinationOutage:
      // Persistent: Redis stops answering and comes back with its data. Otherwise it restarts empty
      // (locks and fencing counters lost) while the fenced indexer, a separate durable service,
      // keeps the newest token it saw: the simulator's wipe variant 1.
      a.kind = f.persistence ? FaultKind::kBackendOutage : FaultKind::kBackendWipe;
      a.variant = f.persistence ? 0 : 1;
      if (s.topology.coordination == CoordinationKind::kEtcd) {
        // etcd, as real mode: one member crashed (restarted with its data) or paused; without
        // `member`, every member paused.
        a.kind = FaultKind::kBackendOutage;
        a.member = f.coordination_member;
        a.variant = f.coordination_member >= 0 ? (f.member_pause.value_or(false) ? 1 : 0) : 2;
      }
      out.push_back(a);
      return out;
    case FaultAction::kClockDrift: {
      a.kind = FaultKind::kClock;
      a.variant = on_coordination ? 1 : 0;
      a.amount = static_cast<int64_t>(f.drift_ppm);
      if (on_coordination) {
        out.push_back(a);
      } else {
        out = ForNodes(s, f, a);
      }
      // The simulator sets a drift and keeps it: the end of `for` sets it back to zero.
      const size_t starts = out.size();
      for (size_t i = 0; i < starts; ++i) {
        SimAction back = out[i];
        back.t = t_ns + length_ns;
        back.amount = 0;
        back.duration_ns = 0;
        out.push_back(back);
      }
      return out;
    }
    case FaultAction::kClockJump:
      if (on_coordination) {
        a.kind = FaultKind::kBackendClock;
        a.amount = Ns(f.jump);
        out.push_back(a);
        return out;
      }
      a.kind = FaultKind::kClock;
      a.variant = 2;  // wall-clock step
      a.amount = Ns(f.jump);
      return ForNodes(s, f, a);
    case FaultAction::kNetwork: {
      a.kind = FaultKind::kNet;
      a.peers = PeersOf(f.partition_from);
      a.member = f.coordination_member;
      std::vector<int> directions;  // 0: node -> backend, 1: backend -> node
      if (f.partition_direction != PartitionDirection::kInbound) directions.push_back(0);
      if (f.partition_direction != PartitionDirection::kOutbound) directions.push_back(1);
      for (int dir : directions) {
        if (f.net_loss > 0) {
          SimAction b = a;
          b.variant = dir;
          b.probability = f.net_loss;
          for (const SimAction& x : ForNodes(s, f, b)) out.push_back(x);
        }
        if (f.net_duplication > 0) {
          SimAction b = a;
          b.variant = 2 + dir;
          b.probability = f.net_duplication;
          for (const SimAction& x : ForNodes(s, f, b)) out.push_back(x);
        }
        if (f.net_delay > Duration::zero()) {
          SimAction b = a;
          b.variant = 4 + dir;
          b.amount = Ns(f.net_delay);
          for (const SimAction& x : ForNodes(s, f, b)) out.push_back(x);
        }
        if (f.net_jitter > Duration::zero()) {
          SimAction b = a;
          b.variant = 6 + dir;
          b.amount = Ns(f.net_jitter);
          for (const SimAction& x : ForNodes(s, f, b)) out.push_back(x);
        }
      }
      return out;
    }
    case FaultAction::kSlow:
      a.kind = FaultKind::kSlow;
      a.amount = Ns(f.slow_wakeup_delay);
      return ForNodes(s, f, a);
    case FaultAction::kDemote:
      a.kind = FaultKind::kDemote;
      return ForNodes(s, f, a);
    case FaultAction::kStop:
      a.kind = FaultKind::kStop;
      return ForNodes(s, f, a);
    case FaultAction::kStoreFault:
      // The rule itself goes into config.store_rules (PlanSimRun); `store_rule` names it.
      a.kind = FaultKind::kStoreFault;
      out.push_back(a);
      return out;
    case FaultAction::kMetaSwap:
      a.kind = FaultKind::kMetaSwap;
      out.push_back(a);
      return out;
    case FaultAction::kStoreCrash:
      a.kind = FaultKind::kStoreCrash;
      a.duration_ns = 0;
      out.push_back(a);
      return out;
    case FaultAction::kRestart:
    case FaultAction::kResume:
    case FaultAction::kHeal:
      return out;  // they end earlier faults (see Undoes); nothing of their own to apply
    case FaultAction::kCoordinationFailover:
      // The loader checks this; a scenario built in code must still not run as if it applied.
      if (s.topology.coordination != CoordinationKind::kRedisSentinel) {
        return Status::InvalidConfig(s.file + ":" + std::to_string(f.line) +
                                     ": action: coordination-failover needs a replicated backend (coordination: "
                                     "redis-sentinel)");
      }
      // With `for`, replication is cut that long and the primary dies at its end (variant 1).
      a.kind = FaultKind::kCoordinationFailover;
      a.duration_ns = f.length ? length_ns : 0;
      a.variant = f.length ? 1 : 0;
      out.push_back(a);
      return out;
  }
  return out;
}

std::string Hex16(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

}  // namespace

Result<SimPlan> PlanSimRun(const Scenario& scenario, uint64_t seed) {
  SimPlan plan;
  sim::SimConfig& c = plan.config;
  c.seed = seed;
  c.nodes = scenario.topology.nodes;
  if (scenario.topology.coordination == CoordinationKind::kRedisSentinel) c.coordination = sim::SimCoordination::kRedisSentinel;
  if (scenario.topology.coordination == CoordinationKind::kEtcd) {
    c.coordination = sim::SimCoordination::kEtcd;
    // The timing real mode starts its members with (harness/real/etcd_controller.cc): election
    // timeout 500 ms, so a minimum TTL of 1 s.
    c.etcd.election_timeout_min_ns = 500'000'000;
    c.etcd.election_timeout_max_ns = 1'000'000'000;
    c.etcd.min_ttl_s = 1;
  }
  c.lease_ms = ToMillis(scenario.topology.lease);
  c.loop_ms = ToMillis(scenario.topology.loop_interval);
  const ElectorSettings elector = ElectorSettingsOf(scenario.topology);
  c.backend_timeout_ms = elector.coordination_timeout_ms;
  c.backend_retries = elector.coordination_retries;
  c.safety_margin_ms = elector.safety_margin_ms;
  c.forbid_campaign_ms = elector.forbid_campaign_ms;
  c.duration_ms = ToMillis(scenario.duration);
  c.faults = 0;  // only the scenario's own faults
  c.quiet_fraction = 0;  // the quiet phase is the simulator's minimum: liveness bound + 2 leases
  if (scenario.expect.leader_within_ms) c.liveness_bound_ms = *scenario.expect.leader_within_ms;
  // With store backends the data plane runs the real workload (Saves and Loads through the
  // production TransferClient and store over the simulated disk); without, meta clients write at
  // the save rate.
  for (const StoreBackend& b : scenario.topology.backends) c.data.paths.push_back(b.name);
  c.data.durable_commit = scenario.topology.durable_commit;
  c.data.inline_header = scenario.topology.inline_header;
  c.data.save_rate_per_s = scenario.workload.save_rate_per_s;
  c.data.load_rate_per_s = scenario.workload.load_rate_per_s;
  c.data.block_size = scenario.workload.block_size_bytes;
  c.data.key_space = scenario.workload.key_space;
  c.data.clients = scenario.workload.clients;
  if (c.data.on()) {
    c.clients = 0;
  } else if (scenario.workload.save_rate_per_s > 0) {
    c.client_interval_ms = std::max<int64_t>(1, static_cast<int64_t>(1000.0 / scenario.workload.save_rate_per_s + 0.5));
  }
  if (Status s = sim::ValidateSimConfig(c); !s.ok()) {
    return Status::InvalidConfig(scenario.file + ": topology: " + s.message());
  }

  Result<std::vector<TimelineStep>> steps = ExpandTimeline(scenario);
  if (!steps.ok()) return steps.status();
  const int64_t run_end_ns = Ns(scenario.duration);
  int64_t last_fault_end_ns = 0;
  for (size_t i = 0; i < steps->size(); ++i) {
    const TimelineStep& step = (*steps)[i];
    if (step.ends) continue;  // a `for` window's end: the simulator ends it after duration_ns
    const FaultEvent& f = scenario.faults[step.fault_index];
    // One-off requests take no time; a fault without `for` lasts until undone or the end.
    const bool one_off = f.action == FaultAction::kDemote || f.action == FaultAction::kStoreCrash;
    int64_t end_ns = one_off ? Ns(step.at) : run_end_ns;
    if (f.length) {
      end_ns = Ns(step.at) + Ns(*f.length);
    } else if (!one_off) {
      for (size_t j = i + 1; j < steps->size(); ++j) {
        const TimelineStep& later = (*steps)[j];
        if (!later.ends && Undoes(scenario.faults[later.fault_index], f)) {
          end_ns = Ns(later.at);
          break;
        }
      }
    }
    end_ns = std::min(end_ns, run_end_ns);
    Result<std::vector<SimAction>> actions = MapFault(scenario, f, Ns(step.at), end_ns - Ns(step.at));
    if (!actions.ok()) return actions.status();
    if (f.action == FaultAction::kStoreFault) {
      // Each occurrence installs its own copy of the rule (ids are unique per mount).
      const std::string id = f.fault_class + "#" + std::to_string(c.store_rules.size() + 1);
      Result<faultfs::Rule> rule = faultfs::ParseRuleText(DumpJson(StoreFaultRuleJson(id, f.rule)), scenario.file);
      if (!rule.ok()) return Status::InvalidConfig(scenario.file + ":" + std::to_string(f.line) + ": " + rule.status().message());
      for (SimAction& a : *actions) a.store_rule = static_cast<int>(c.store_rules.size());
      c.store_rules.push_back(sim::SimStoreRule{f.backend, *rule});
    }
    for (const SimAction& a : *actions) {
      // A failover lasts until the replica may have been promoted: the quiet phase starts after.
      const int64_t promotion_ns = a.kind == FaultKind::kCoordinationFailover ? c.sentinel.promotion_delay_max_ns : 0;
      last_fault_end_ns = std::max(last_fault_end_ns, a.t + a.duration_ns + promotion_ns);
    }
    for (const SimAction& a : *actions) {
      c.explicit_faults.push_back(a);
      plan.fault_classes.push_back(f.fault_class);
      if (a.t != Ns(step.at)) continue;  // a clock drift's reset at the end of its window
      const bool member_outage = (f.action == FaultAction::kCoordinationOutage || f.partition_from == PartitionFrom::kPeers) &&
                                 f.coordination_member >= 0;
      const std::string target = member_outage ? "coordination member " + std::to_string(f.coordination_member)
                                 : f.action == FaultAction::kCoordinationOutage ? std::string("coordination")
                                 : f.node.kind == NodeRef::Kind::kIndex         ? "node " + std::to_string(a.node)
                                 : f.node.kind == NodeRef::Kind::kAll           ? "node " + std::to_string(a.node)
                                                                                : f.node.ToString();
      AppliedFault applied{f.fault_class, target, static_cast<double>(a.t) / kMsNs, std::nullopt};
      if (a.duration_ns > 0) applied.end_ms = static_cast<double>(a.t + a.duration_ns) / kMsNs;
      plan.applied.push_back(applied);
    }
  }
  // Nothing of the timeline is dropped: the quiet phase (everything healed, liveness checked)
  // starts after the last fault has ended, or at its usual place if that is later.
  const int64_t bound_ms = c.liveness_bound_ms > 0 ? c.liveness_bound_ms : 2 * c.lease_ms;
  const int64_t usual_quiet_ms = std::max<int64_t>(0, c.duration_ms - bound_ms - 2 * c.lease_ms);
  c.quiet_start_ms = std::max(usual_quiet_ms, (last_fault_end_ns + kMsNs - 1) / kMsNs);
  return plan;
}

RunResult RunSimScenario(const Scenario& scenario, uint64_t seed, const std::string& history_dir) {
  const auto wall_start = std::chrono::steady_clock::now();
  RunResult r = StartRunResult(scenario, seed, RunMode::kSim);

  Result<SimPlan> plan = PlanSimRun(scenario, seed);
  if (!plan.ok()) {
    r.error = plan.status().message();
    return r;
  }
  if (!history_dir.empty()) plan->config.history_path = (std::filesystem::path(history_dir) / r.HistoryFileName()).string();
  const sim::SimResult s = sim::RunSimulation(plan->config);
  r.trace_hash = Hex16(s.trace_hash);
  r.faults = plan->applied;  // the quiet phase starts after the last of them (PlanSimRun)

  for (const sim::FailoverEvent& e : s.failovers) {
    FailoverEvent f;
    f.fault_class = e.cause == "none" ? "none" : e.cause;
    if (e.fault_ns >= 0) {
      // Name the failover after the scenario fault that fired at that instant.
      for (size_t i = 0; i < plan->config.explicit_faults.size(); ++i) {
        const sim::FaultAction& a = plan->config.explicit_faults[i];
        // A failover's record starts when the primary dies, at the end of its replication cut.
        const int64_t fired_ns = a.kind == FaultKind::kCoordinationFailover ? a.t + a.duration_ns : a.t;
        if (fired_ns == e.fault_ns) {
          f.fault_class = plan->fault_classes[i];
          break;
        }
      }
    }
    f.fault_at_ms = static_cast<double>(e.fault_ns >= 0 ? e.fault_ns : e.old_stopped_ns) / kMsNs;
    f.old_leader = e.from_node;
    f.new_leader = e.to_node;
    f.old_leader_stopped_ms = static_cast<double>(e.old_stopped_ns) / kMsNs;
    if (e.lock_acquired_ns >= 0) f.lock_acquired_ms = static_cast<double>(e.lock_acquired_ns) / kMsNs;
    f.serving_ms = static_cast<double>(e.serving_ns) / kMsNs;
    f.unnecessary = e.unnecessary;
    r.failovers.push_back(f);
  }
  for (const sim::LeadershipInterval& span : s.leadership) {
    r.leadership.push_back(LeadershipSpan{span.node, static_cast<double>(span.start_ns) / kMsNs,
                                          static_cast<double>(span.end_ns) / kMsNs, span.acting});
  }

  RunCounters& c = r.counters;
  // Saves: the data plane's acknowledged Saves when it runs, else the meta index's accepted writes.
  c.saves = plan->config.data.on() ? s.data.saves : static_cast<int64_t>(s.index.accepted);
  c.loads = s.data.loads;
  c.corrupt_reads_detected = s.data.corrupt_detected;
  c.corrupt_reads_returned = s.data.corrupt_returned;
  c.misrouted_reads_reported = s.data.misrouted_reported;
  c.acked_blocks = s.data.acked_blocks;
  c.acked_blocks_unreadable = s.data.acked_unreadable;
  if (s.history.checked) r.history = ToHistoryResult(s.history, history_dir.empty() ? "" : r.HistoryFileName());
  if (plan->config.data.on()) r.data_plane = DataPlane{s.data.errors, static_cast<int64_t>(s.health_transitions), s.data.saves_cut_by_power_loss};
  c.failovers = static_cast<int64_t>(s.failovers.size());
  c.reelections = CountReelections(r.failovers);
  c.unnecessary_failovers = static_cast<int64_t>(s.unnecessary_failovers);
  c.stale_writes_accepted = static_cast<int64_t>(s.index.stale_accepted);
  c.stale_writes_rejected = static_cast<int64_t>(s.index.stale_rejected);
  c.dual_acting_windows = static_cast<int64_t>(s.dual_acting_windows);
  c.dual_acting_ms = static_cast<double>(s.dual_acting_ns) / kMsNs;
  c.token_regressions = static_cast<int64_t>(s.token_regressions);
  c.duplicate_lock_holders = static_cast<int64_t>(s.duplicate_lock_holders);
  c.lease_terms_checked = static_cast<int64_t>(s.lease_terms_checked);
  c.lease_overruns = static_cast<int64_t>(s.lease_overruns);
  c.lease_overrun_max_ms = static_cast<double>(s.max_lease_overrun_ns) / kMsNs;
  c.trace_events = static_cast<int64_t>(s.events);

  Observed observed;
  observed.store = plan->config.data.on();
  observed.liveness_checked = true;
  observed.lease_ends = true;
  observed.leader_after_each_fault = scenario.expect.leader_within_ms.has_value();
  for (const sim::Violation& v : s.violations) {
    switch (v.kind) {
      case sim::ViolationKind::kLiveness:
        observed.liveness_problem = v.message;
        break;
      case sim::ViolationKind::kDeadlock:
      case sim::ViolationKind::kSimulatorError:
      case sim::ViolationKind::kShutdown:
      case sim::ViolationKind::kDataPlane:
        r.error += (r.error.empty() ? "" : "; ") + v.message;
        break;
      case sim::ViolationKind::kUnexpectedCorruption:
      case sim::ViolationKind::kHealthNeverTripped:
      case sim::ViolationKind::kMisrouteUnreported:
        // Product bugs no expectation names: they fail the run whatever the scenario expects.
        r.verdicts.push_back(InvariantVerdict{std::string(sim::ViolationKindName(v.kind)), false, v.message});
        break;
      case sim::ViolationKind::kStaleWriteAccepted:
      case sim::ViolationKind::kTokenRegression:
      case sim::ViolationKind::kDualActing:
      case sim::ViolationKind::kCorruptReturned:
      case sim::ViolationKind::kAckedLost:
      case sim::ViolationKind::kNotLinearizable:
      case sim::ViolationKind::kHistoryInvariant:
        break;  // judged from the counters and the history, against the scenario's expectations
    }
  }
  Expectations expect = scenario.expect;
  if (!expect.leader_within_ms) {
    // The simulator always checks liveness after its quiet phase; report it under its bound.
    expect.leader_within_ms = plan->config.liveness_bound_ms > 0 ? plan->config.liveness_bound_ms : 2 * plan->config.lease_ms;
  }
  EvaluateExpectations(expect, observed, r);
  r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace kvchaos::harness
