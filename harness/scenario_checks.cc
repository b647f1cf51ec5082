// Cross-field checks of a scenario (see scenario_checks.h). Each check says what is impossible and
// why, in the user's units, at the line of the key to change.
#include "harness/scenario_checks.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "core/common/units.h"
#include "harness/timeline.h"

namespace kvchaos::harness {
namespace {

std::string FaultPath(size_t i, const std::string& key = "") {
  std::string path = "faults[" + std::to_string(i) + "]";
  return key.empty() ? path : path + "." + key;
}

// The last start of a fault repeated `every` from `at` while before `limit`.
Duration LastStart(Duration at, Duration every, Duration limit) {
  if (limit <= at) return at;
  return at + ((limit - at - Duration(1)) / every) * every;
}

bool IsNodeLifecycle(FaultAction a) {
  return a == FaultAction::kCrash || a == FaultAction::kStop || a == FaultAction::kPause;
}

class Checker {
 public:
  Checker(const Scenario& s, const LineOf& line_of, SourceProblems* problems)
      : s_(s), line_of_(line_of), problems_(problems) {}

  void Run() {
    CheckTopology();
    CheckWorkload();
    for (size_t i = 0; i < s_.faults.size(); ++i) CheckFault(i);
    CheckExpectations();
    // Node states only make sense over a timeline whose individual events are sound.
    if (problems_->empty()) CheckNodeStates();
  }

 private:
  void Problem(const std::string& path, const std::string& text) { problems_->Add(line_of_(path), path, text); }

  void CheckTopology() {
    const Topology& t = s_.topology;
    if (t.loop_interval >= t.lease) {
      Problem("topology.loop_interval_ms",
              "must be shorter than lease_ms (" + std::to_string(ToMillis(t.lease)) +
                  "): the elector renews and checks its lease every loop, and demotes at lease end - loop");
    }
    // The simulator models one Redis (sim-redis), a replicated one (redis-sentinel: a primary and
    // its replica, sim/sim_sentinel.h) and a 3-member etcd cluster (sim/sim_etcd.h).
    const bool sim_models = t.coordination == CoordinationKind::kSimRedis ||
                            t.coordination == CoordinationKind::kRedisSentinel ||
                            t.coordination == CoordinationKind::kEtcd;
    if (s_.both_modes && !sim_models && t.coordination != CoordinationKind::kRedis) {
      Problem("topology.coordination", "a file for both modes runs on Redis (the simulator's in mode sim, a "
                                       "redis-server in mode real), on redis-sentinel or on etcd: use one of those, "
                                       "or omit the key");
    } else if (s_.mode == RunMode::kSim && !sim_models) {
      Problem("topology.coordination",
              "mode sim runs on the simulator's backends: use sim-redis (or omit the key), redis-sentinel or etcd");
    }
    if (s_.mode == RunMode::kReal && t.coordination == CoordinationKind::kSimRedis) {
      Problem("topology.coordination", s_.both_modes ? "sim-redis exists only in mode sim: use redis, which mode sim "
                                                       "runs on the simulator's Redis"
                                                     : "sim-redis exists only in mode sim: use redis, file or memory");
    }
    if (t.safety_margin && *t.safety_margin >= t.lease) {
      Problem("topology.safety_margin_ms", "must be less than lease_ms (" + std::to_string(ToMillis(t.lease)) +
                                               "): every lease deadline is lease - margin, so no lease would be valid");
    }
    // The client settings are the network clients' (Redis and etcd; file and memory have none).
    const bool network_client = t.coordination != CoordinationKind::kMemory && t.coordination != CoordinationKind::kFile;
    auto network_only = [&](bool given, const std::string& key) {
      if (!given || network_client) return;
      Problem("topology." + key, "sets the coordination client's timeouts, but coordination is " +
                                     std::string(CoordinationKindName(t.coordination)) +
                                     ", which has no client: use redis or etcd, or drop the key");
    };
    network_only(t.coordination_timeout.has_value(), "coordination_timeout_ms");
    network_only(t.coordination_retries.has_value(), "coordination_retries");
    if (s_.mode == RunMode::kReal && t.coordination == CoordinationKind::kMemory && t.nodes > 1) {
      Problem("topology.coordination", "memory coordination lives in one process and cannot serve " +
                                           std::to_string(t.nodes) + " node processes: use redis or file");
    }
    std::set<std::string> names;
    for (size_t i = 0; i < t.backends.size(); ++i) {
      if (t.backends[i].name == "all") {
        Problem("topology.backends[" + std::to_string(i) + "].name", "'all' is reserved (store-fault backend: all)");
      }
      if (!names.insert(t.backends[i].name).second) {
        Problem("topology.backends[" + std::to_string(i) + "].name",
                "backend name '" + t.backends[i].name + "' is used twice");
      }
    }
  }

  void CheckWorkload() {
    const Workload& w = s_.workload;
    if (w.block_size_bytes == 0 || w.block_size_bytes > (1ull << 30)) {
      Problem("workload.block_size", "must be between 1 B and 1 GiB, got " + FormatBytes(w.block_size_bytes));
    }
    const bool data_plane = w.save_rate_per_s > 0 || w.load_rate_per_s > 0;
    if (data_plane && s_.topology.backends.empty() && s_.mode == RunMode::kReal) {
      Problem("workload", "a data-plane workload needs at least one store backend in topology.backends");
    }
  }

  void CheckTime(size_t i, const std::string& key, Duration value) {
    if (value >= s_.duration) {
      Problem(FaultPath(i, key), FormatDuration(value) + " is at or after the end of the run (duration " +
                                     FormatDuration(s_.duration) + ")");
    }
  }

  void CheckNodeRef(size_t i, const FaultEvent& f) {
    const std::string path = FaultPath(i, "node");
    if (f.node.kind == NodeRef::Kind::kIndex && f.node.index >= s_.topology.nodes) {
      Problem(path, "node " + std::to_string(f.node.index) + " does not exist: topology.nodes is " +
                        std::to_string(s_.topology.nodes) + " (indexes 0.." + std::to_string(s_.topology.nodes - 1) +
                        ")");
    }
    if (f.node.kind == NodeRef::Kind::kFollower && s_.topology.nodes < 2) {
      Problem(path, "a single-node topology has no follower");
    }
    const bool symbolic = f.node.kind == NodeRef::Kind::kLeader || f.node.kind == NodeRef::Kind::kFollower ||
                          f.node.kind == NodeRef::Kind::kAll;
    if (IsNodeLifecycle(f.action) && symbolic && !f.length) {
      Problem(FaultPath(i, "action"), std::string(FaultActionName(f.action)) + " of '" + f.node.ToString() +
                                          "' needs `for`: which node to bring back is only known at run time, "
                                          "so restart/resume cannot name it");
    }
  }

  // The backend of a store-fault or store-crash: a faultfs backend of the topology, or all of them.
  void CheckFaultfsBackend(size_t i, const FaultEvent& f) {
    const Topology& t = s_.topology;
    if (f.backend == "all") {
      if (t.backends.empty()) Problem(FaultPath(i, "backend"), "topology.backends is empty");
      for (const StoreBackend& b : t.backends) {
        if (!b.faultfs) {
          Problem(FaultPath(i, "backend"), "backend '" + b.name +
                                               "' is not on faultfs (set faultfs: true in topology.backends)");
        }
      }
    } else {
      auto it = std::find_if(t.backends.begin(), t.backends.end(),
                             [&](const StoreBackend& b) { return b.name == f.backend; });
      if (it == t.backends.end()) {
        std::string known;
        for (const StoreBackend& b : t.backends) known += (known.empty() ? "" : ", ") + b.name;
        Problem(FaultPath(i, "backend"), "no backend named '" + f.backend + "' in topology.backends (" +
                                             (known.empty() ? "none defined" : known) + ")");
      } else if (!it->faultfs) {
        Problem(FaultPath(i, "backend"),
                "backend '" + f.backend + "' is not on faultfs (set faultfs: true in topology.backends)");
      }
    }
  }

  // What the simulator's redis-sentinel refuses, as real mode does: its coordination fault is the
  // failover; outages and the backend's clock act on one server, and here there are two. A node's
  // links to coordination are its links to both servers (real mode: to both and the sentinels).
  void CheckSimSentinelFault(size_t i, const FaultEvent& f) {
    if (f.action == FaultAction::kCoordinationOutage) {
      Problem(FaultPath(i, "action"), "coordination-outage stops one Redis: with coordination: redis-sentinel the "
                                      "coordination fault is coordination-failover (the primary dies, the replica "
                                      "is promoted)");
    } else if ((f.action == FaultAction::kClockDrift || f.action == FaultAction::kClockJump) &&
               f.node.kind == NodeRef::Kind::kCoordination) {
      Problem(FaultPath(i, "node"), std::string(FaultActionName(f.action)) +
                                        " on coordination moves one server's clock: with redis-sentinel there are "
                                        "two (target a node)");
    }
  }

  // `member`: one member of the etcd cluster.
  void CheckEtcdMember(size_t i, const FaultEvent& f) {
    if (f.coordination_member < 0) return;
    if (s_.topology.coordination != CoordinationKind::kEtcd) {
      Problem(FaultPath(i, "member"), "names one member of a replicated backend: needs coordination: etcd");
    } else if (f.coordination_member >= kEtcdMembers) {
      Problem(FaultPath(i, "member"), std::to_string(f.coordination_member) + " is not a member: the etcd cluster has " +
                                          std::to_string(kEtcdMembers) + " (0.." + std::to_string(kEtcdMembers - 1) + ")");
    }
  }

  // partition from: peers: etcd member `member` cut from the other members (their raft links).
  void CheckMemberPeersCut(size_t i, const FaultEvent& f) {
    if (s_.mode == RunMode::kReal) {
      Problem(FaultPath(i, "from"), "peers is sim-only: real etcd members derive their IDs from the peer URLs, so the "
                                    "runner cannot put proxies between members (use mode: sim)");
    }
    if (s_.topology.coordination != CoordinationKind::kEtcd) {
      Problem(FaultPath(i, "from"), "peers cuts an etcd member from the other members: needs coordination: etcd");
      return;
    }
    CheckEtcdMember(i, f);
    if (f.coordination_member < 0) {
      Problem(FaultPath(i, "member"), "from: peers needs the member to cut off (0.." + std::to_string(kEtcdMembers - 1) + ")");
    }
    if (f.partition_direction != PartitionDirection::kBoth) {
      Problem(FaultPath(i, "direction"), "a member cut from its peers loses its raft links both ways: leave direction at both");
    }
  }

  // partition / network with `member`: the node's link to that one etcd member.
  void CheckLinkFault(size_t i, const FaultEvent& f) {
    if (f.partition_from == PartitionFrom::kPeers) {
      CheckMemberPeersCut(i, f);
      return;
    }
    CheckNodeRef(i, f);
    CheckEtcdMember(i, f);
    if (f.coordination_member >= 0 && f.partition_from != PartitionFrom::kCoordination) {
      Problem(FaultPath(i, "member"), "cuts the link to one coordination member: needs from: coordination (the default)");
    }
  }

  void CheckCoordinationOutage(size_t i, const FaultEvent& f) {
    const bool etcd = s_.topology.coordination == CoordinationKind::kEtcd;
    CheckEtcdMember(i, f);
    if (f.member_pause && f.coordination_member < 0) {
      Problem(FaultPath(i, "how"), "says what happens to one member: needs `member`");
    }
    if (etcd && !f.persistence) {
      Problem(FaultPath(i, "persistence"), "etcd members keep their data on disk: a crashed member restarts with it "
                                           "(`member`); an empty restart is a Redis fault");
    }
  }

  void CheckStoreFault(size_t i, const FaultEvent& f) {
    CheckFaultfsBackend(i, f);
    const StoreFaultRule& r = f.rule;
    const int effects = (r.errno_value != 0) + (r.latency.has_value()) + (r.bit_flips > 0) + (r.hang ? 1 : 0) +
                        (r.misdirected_read ? 1 : 0);
    if (effects != 1) {
      Problem(FaultPath(i), "a store-fault needs exactly one effect of errno, latency, bit_flips, hang or "
                            "misdirected_read (got " + std::to_string(effects) + ")");
    }
    for (const auto& [on, name] : {std::pair{r.bit_flips > 0, "bit_flips"}, std::pair{r.misdirected_read, "misdirected_read"}}) {
      if (!on) continue;
      for (const std::string& op : r.ops) {
        if (op != "read") Problem(FaultPath(i, "ops"), std::string(name) + " applies to reads only, not '" + op + "'");
      }
    }
    if (!r.source.empty() && !r.misdirected_read) {
      Problem(FaultPath(i, "source"), "belongs to misdirected_read (the files a misdirected read is served from)");
    }
    if (r.latency && r.latency->count() <= 0) Problem(FaultPath(i, "latency"), "must be greater than 0");
    if (r.probability <= 0) Problem(FaultPath(i, "probability"), "0 never fires: remove the fault or raise it");
  }

  void CheckFault(size_t i) {
    const FaultEvent& f = s_.faults[i];
    CheckTime(i, "at", f.at);
    if (f.length) {
      if (f.length->count() <= 0) Problem(FaultPath(i, "for"), "must be greater than 0");
      if (f.at + *f.length > s_.duration) {
        Problem(FaultPath(i, "for"), "the fault would end at " + FormatDuration(f.at + *f.length) +
                                         ", after the end of the run (duration " + FormatDuration(s_.duration) +
                                         "); omit `for` to keep it until the end");
      }
    }
    if (f.every) {
      if (f.every->count() <= 0) Problem(FaultPath(i, "every"), "must be greater than 0");
      if (f.length && *f.every <= *f.length) {
        Problem(FaultPath(i, "every"), "must be longer than `for` (" + FormatDuration(*f.length) +
                                           "), or one window would start before the previous one ends");
      }
      if (f.every->count() > 0) {
        const Duration limit = f.until.value_or(s_.duration);
        const int64_t repeats = limit > f.at ? (limit - f.at - Duration(1)) / *f.every + 1 : 1;
        if (static_cast<uint64_t>(repeats) * (f.length ? 2 : 1) > kMaxTimelineSteps) {
          Problem(FaultPath(i, "every"), "repeats " + std::to_string(repeats) + " times, more than the " +
                                             std::to_string(kMaxTimelineSteps) +
                                             " timeline steps a scenario may expand to");
        }
      }
      const bool stateful = IsNodeLifecycle(f.action) || f.action == FaultAction::kPartition ||
                            f.action == FaultAction::kNetwork || f.action == FaultAction::kSlow ||
                            f.action == FaultAction::kCoordinationOutage || f.action == FaultAction::kStoreFault ||
                            f.action == FaultAction::kMetaSwap;
      if (stateful && !f.length) {
        Problem(FaultPath(i, "every"), "a repeated " + std::string(FaultActionName(f.action)) +
                                           " needs `for`, or the second one would hit a fault still in place");
      }
    }
    if (f.until) {
      if (!f.every) Problem(FaultPath(i, "until"), "only means something with `every`");
      if (*f.until <= f.at) Problem(FaultPath(i, "until"), "must be after `at` (" + FormatDuration(f.at) + ")");
      if (*f.until > s_.duration) {
        Problem(FaultPath(i, "until"), FormatDuration(*f.until) + " is after the end of the run (duration " +
                                           FormatDuration(s_.duration) + ")");
      }
      // The last repeat still has to end within the run.
      if (f.every && f.length && f.every->count() > 0 && *f.until <= s_.duration) {
        const Duration last = LastStart(f.at, *f.every, *f.until);
        if (last + *f.length > s_.duration) {
          Problem(FaultPath(i, "for"), "the last repeat (at " + FormatDuration(last) + ") would end after the run");
        }
      }
    } else if (f.every && f.length && f.every->count() > 0) {
      const Duration last = LastStart(f.at, *f.every, s_.duration);
      if (last + *f.length > s_.duration) {
        Problem(FaultPath(i, "every"), "the last repeat (at " + FormatDuration(last) + ") would end at " +
                                           FormatDuration(last + *f.length) + ", after the run: set `until`");
      }
    }

    switch (f.action) {
      case FaultAction::kCrash:
      case FaultAction::kStop:
      case FaultAction::kPause:
      case FaultAction::kRestart:
      case FaultAction::kResume:
      case FaultAction::kClockDrift:
      case FaultAction::kClockJump:
        CheckNodeRef(i, f);
        break;
      case FaultAction::kPartition:
        CheckLinkFault(i, f);
        break;
      case FaultAction::kNetwork:
        CheckLinkFault(i, f);
        if (f.net_loss == 0 && f.net_duplication == 0 && f.net_delay.count() == 0 && f.net_jitter.count() == 0 &&
            f.net_bandwidth == 0) {
          Problem(FaultPath(i), "a network fault needs loss, duplication, delay, jitter or bandwidth");
        }
        break;
      case FaultAction::kSlow:
        CheckNodeRef(i, f);
        if (f.slow_wakeup_delay.count() <= 0) Problem(FaultPath(i, "wakeup_delay"), "must be greater than 0");
        break;
      case FaultAction::kDemote:
        CheckNodeRef(i, f);
        if (f.length || f.every) {
          Problem(FaultPath(i, f.length ? "for" : "every"), "demote is a one-off request; it has no duration");
        }
        break;
      case FaultAction::kStoreFault:
        CheckStoreFault(i, f);
        break;
      case FaultAction::kStoreCrash:
        CheckFaultfsBackend(i, f);
        break;
      case FaultAction::kMetaSwap:
        if (s_.topology.backends.empty()) {
          Problem(FaultPath(i, "action"), "meta-swap exchanges the records of two cached keys: the run needs a data "
                                          "plane (topology.backends and a workload)");
        }
        if (!f.length) {
          Problem(FaultPath(i, "for"), "meta-swap needs `for`: the two records are swapped back at its end, so the "
                                       "readback sees the index as it was written");
        }
        break;
      case FaultAction::kCoordinationOutage:
        CheckCoordinationOutage(i, f);
        break;
      case FaultAction::kCoordinationFailover:
        if (s_.topology.coordination != CoordinationKind::kRedisSentinel) {
          Problem(FaultPath(i, "action"), "promotes the replica of a Redis primary: needs coordination: redis-sentinel");
        }
        if (f.every) {
          Problem(FaultPath(i, "every"), "the dead primary stays down (the setup has one replica): one failover a run");
        }
        if (++failovers_ == 2) Problem(FaultPath(i, "action"), "a second coordination-failover has no replica left to promote");
        break;
      case FaultAction::kHeal:
        break;
    }
    if (f.action == FaultAction::kPartition && f.partition_from != PartitionFrom::kCoordination &&
        f.partition_from != PartitionFrom::kPeers && s_.topology.nodes < 2) {
      Problem(FaultPath(i, "from"), "a single-node topology has no other nodes to be cut off from");
    }
    if (f.action == FaultAction::kClockJump && f.jump.count() == 0) Problem(FaultPath(i, "by"), "a jump of 0 changes nothing");
    if (f.partition_reset && f.partition_direction != PartitionDirection::kBoth) {
      Problem(FaultPath(i, "reset"), "a reset ends the connection both ways: leave direction at both");
    }
    if (s_.mode == RunMode::kSim && s_.topology.coordination == CoordinationKind::kRedisSentinel) {
      CheckSimSentinelFault(i, f);
    }
    if (s_.mode != RunMode::kReal) {
      // The simulator's links carry messages, not byte streams over connections.
      if (f.partition_reset) {
        Problem(FaultPath(i, "reset"), "real-only: the simulator's links have no connections to reset (use mode: real)");
      }
      if (f.net_bandwidth != 0) {
        Problem(FaultPath(i, "bandwidth"), "real-only: the simulator's messages have no size to throttle (use mode: real)");
      }
    }

    // What each mode can apply.
    if (s_.mode == RunMode::kReal) {
      if (f.action == FaultAction::kSlow) {
        // Never skipped silently at run time: a real run could not honour it.
        Problem(FaultPath(i, "action"), std::string(FaultActionName(f.action)) +
                                            " needs the simulator: it is sim-only (real mode applies signals, "
                                            "Redis pauses and restarts, admin demotes, proxy partitions and network faults, "
                                            "faultfs rules, node clocks through a preload library): use mode: sim");
      }
      if ((f.action == FaultAction::kClockDrift || f.action == FaultAction::kClockJump) &&
          f.node.kind == NodeRef::Kind::kCoordination) {
        // The clock preload runs under the node processes only; the coordination server keeps true time.
        Problem(FaultPath(i, "node"), std::string(FaultActionName(f.action)) +
                                          " on coordination needs the simulator: real mode moves node clocks only "
                                          "(a clock preload per node process): target a node, or use mode: sim");
      }
      // Real partitions and network faults act on a node's connections through the runner's
      // proxies: to coordination (the Redis, each etcd member, or each server and sentinel of a
      // redis-sentinel group through the connect preload: one set per node), and with
      // `from: nodes` the workload client's to the node's API (nodes talk to each other only
      // through coordination; the observer watches directly).
      const bool link_fault = (f.action == FaultAction::kPartition || f.action == FaultAction::kNetwork) &&
                              f.partition_from != PartitionFrom::kPeers;  // refused above
      if ((f.action == FaultAction::kHeal || (link_fault && f.partition_from != PartitionFrom::kNodes)) &&
          s_.topology.coordination != CoordinationKind::kRedis && s_.topology.coordination != CoordinationKind::kEtcd &&
          s_.topology.coordination != CoordinationKind::kRedisSentinel) {
        Problem(FaultPath(i, "action"), std::string(FaultActionName(f.action)) +
                                            " in real mode cuts a node's connections to coordination through the "
                                            "runner's proxies: needs coordination: redis, redis-sentinel or etcd");
      }
      if (link_fault && f.partition_from != PartitionFrom::kCoordination && s_.topology.backends.empty()) {
        Problem(FaultPath(i, "from"), "in real mode the hosts that call a node's API are the workload's client: "
                                      "needs topology.backends (or mode: sim)");
      }
      if (f.action == FaultAction::kNetwork && f.net_duplication > 0) {
        // TCP delivers every byte once: a duplicated segment never reaches the node.
        Problem(FaultPath(i, "duplication"), "real mode's network runs over TCP, which drops duplicates before any "
                                             "program sees them: use loss or delay (or mode: sim)");
      }
      if (f.action == FaultAction::kCoordinationOutage && s_.topology.coordination != CoordinationKind::kRedis &&
          s_.topology.coordination != CoordinationKind::kEtcd) {
        Problem(FaultPath(i, "action"), "a coordination outage in real mode stops redis-server or etcd members: needs "
                                        "coordination: redis or etcd");
      }
    }
  }

  void CheckExpectations() {
    const Expectations& e = s_.expect;
    CheckBounds("expect", e);
    for (const auto& [name, bounds] : e.classes) {
      const std::string path = "expect.classes." + name;
      const std::string& wanted = name;  // a structured binding cannot be captured before C++20's clang 16
      const bool used = std::any_of(s_.faults.begin(), s_.faults.end(),
                                    [&wanted](const FaultEvent& f) { return f.fault_class == wanted; });
      if (!used) Problem(path, "no fault has class '" + name + "' (classes of this file: " + FaultClassList() + ")");
      if (!bounds.any()) Problem(path, "sets no bound (failover_p99_ms, failover_min_ms, failovers, reelections, unavailable_p99_ms, unavailable_max_ms)");
      CheckBounds(path, bounds);
    }
    for (const auto& [code, n] : e.max_errors) {
      StatusCode parsed;
      if (!StatusCodeFromName(code, &parsed) || parsed == StatusCode::kOk) {
        Problem("expect.max_errors." + code, "'" + code + "' is not an error code name (e.g. StoreUnhealthy, IoError, "
                                             "Timeout, ChecksumMismatch, NotFound; core/common/status.h)");
      }
    }
    if (!e.max_errors.empty() && s_.topology.backends.empty()) {
      Problem("expect.max_errors", "counts data-plane errors, but the run has no data plane: it needs "
                                   "topology.backends and a workload");
    }
    // Without durable commits (upstream's cache semantics) a power loss loses acknowledged blocks
    // by design: the expectation could only fail.
    for (size_t i = 0; i < s_.faults.size(); ++i) {
      if (s_.faults[i].action != FaultAction::kStoreCrash || !e.acked_blocks_readable || s_.topology.durable_commit) {
        continue;
      }
      Problem("expect.acked_blocks_readable",
              "cannot hold: the store-crash of " + FaultPath(i) + " loses every acknowledged block not yet durable, "
              "and topology.durable_commit is off; set durable_commit: true, or expect acked_blocks_readable: false");
      break;
    }
    if (e.min_misrouted_reads > 0 && !s_.topology.inline_header) {
      Problem("expect.min_misrouted_reads", "can never be reached: only blocks with an inline header can tell a "
                                            "misrouted read; set topology.inline_header: true");
    }
    const double seconds = std::chrono::duration<double>(s_.duration).count();
    const double max_ops = (s_.workload.save_rate_per_s + s_.workload.load_rate_per_s) * seconds;
    if (e.min_ops > 0 && static_cast<double>(e.min_ops) > max_ops) {
      Problem("expect.min_ops", "can never be reached: the workload issues at most " +
                                    std::to_string(static_cast<int64_t>(max_ops)) + " operations in " +
                                    FormatDuration(s_.duration));
    }
    // A crashed or frozen leader keeps its lock until the lease runs out, renewed at most one loop
    // before the fault: no failover after such a fault can beat lease - loop_interval.
    const int64_t floor_ms = ToMillis(s_.topology.lease) - ToMillis(s_.topology.loop_interval);
    std::set<std::string> reported;  // bound paths, each reported once
    for (const FaultEvent& f : s_.faults) {
      const bool kills_leader = (f.action == FaultAction::kCrash || f.action == FaultAction::kPause) &&
                                (f.node.kind == NodeRef::Kind::kLeader || f.node.kind == NodeRef::Kind::kAll);
      if (!kills_leader) continue;
      const auto check = [&](const std::string& path, std::optional<int64_t> bound) {
        if (!bound || *bound >= floor_ms || !reported.insert(path).second) return;
        Problem(path, std::to_string(*bound) + " ms cannot be met: after a leader " + std::string(FaultActionName(f.action)) +
                          " its lease must run out first (lease_ms - loop_interval_ms = " + std::to_string(floor_ms) + " ms)");
      };
      check("expect.failover_p99_ms", e.failover_p99_ms);
      const auto it = e.classes.find(f.fault_class);
      if (it != e.classes.end()) check("expect.classes." + f.fault_class + ".failover_p99_ms", it->second.failover_p99_ms);
    }
  }

  // Bounds no run can meet together.
  void CheckBounds(const std::string& path, const FailoverBounds& b) {
    const auto range = [&](const std::string& key, std::optional<int64_t> min, std::optional<int64_t> max) {
      if (min && max && *min > *max) {
        Problem(path + "." + key, "min " + std::to_string(*min) + " is above max " + std::to_string(*max) + ": no run can pass");
      }
    };
    range("failovers", b.failovers_min, b.failovers_max);
    range("reelections", b.reelections_min, b.reelections_max);
    if (b.reelections_min && b.failovers_max && *b.reelections_min > *b.failovers_max) {
      Problem(path + ".reelections", "min " + std::to_string(*b.reelections_min) + " is above failovers.max " +
                                         std::to_string(*b.failovers_max) + " (re-elections are failovers): no run can pass");
    }
    if (b.failover_min_ms && b.failover_p99_ms && *b.failover_min_ms > *b.failover_p99_ms) {
      Problem(path + ".failover_min_ms", "is above failover_p99_ms (" + std::to_string(*b.failover_p99_ms) +
                                             "): no failover can be both");
    }
    if (b.unavailable_p99_ms && b.unavailable_max_ms && *b.unavailable_p99_ms > *b.unavailable_max_ms) {
      Problem(path + ".unavailable_p99_ms", "is above unavailable_max_ms (" + std::to_string(*b.unavailable_max_ms) +
                                                "): the p99 is never above the max");
    }
  }

  std::string FaultClassList() const {
    std::set<std::string> names;
    for (const FaultEvent& f : s_.faults) names.insert(f.fault_class);
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return list.empty() ? "none: the file has no faults" : list;
  }

  // Walks the expanded timeline with each indexed node's state, so a restart of a node that is up,
  // a resume of a node that is not paused or a second crash of a crashed node is caught here rather
  // than as a confusing runner failure minutes into a run.
  void CheckNodeStates() {
    enum class State { kUp, kDown, kPaused };
    Result<std::vector<TimelineStep>> steps = ExpandTimeline(s_);
    if (!steps.ok()) {
      problems_->Add(1, "faults", steps.status().message());
      return;
    }
    std::vector<State> state(static_cast<size_t>(s_.topology.nodes), State::kUp);
    std::vector<std::string> since(state.size(), "the start");
    for (const TimelineStep& step : *steps) {
      const FaultEvent& f = s_.faults[step.fault_index];
      if (f.node.kind != NodeRef::Kind::kIndex || f.action == FaultAction::kClockDrift ||
          f.action == FaultAction::kClockJump || f.action == FaultAction::kPartition ||
          f.action == FaultAction::kNetwork || f.action == FaultAction::kSlow) {
        continue;
      }
      const size_t n = static_cast<size_t>(f.node.index);
      const std::string when = FormatDuration(step.at);
      const std::string node = "node " + std::to_string(n);
      const std::string where = FaultPath(step.fault_index, "node");
      auto describe = [&](State s) {
        return s == State::kUp ? "up" : s == State::kDown ? "down" : "paused";
      };
      auto require = [&](State wanted, const std::string& what) {
        if (state[n] == wanted) return true;
        Problem(where, what + " of " + node + " at " + when + ", but it is " + describe(state[n]) + " then (since " +
                           since[n] + ")");
        return false;
      };
      auto set = [&](State s) {
        state[n] = s;
        since[n] = when + ", line " + std::to_string(f.line);
      };
      if (!step.ends) {
        switch (f.action) {
          case FaultAction::kCrash:
            if (state[n] == State::kDown) {
              require(State::kUp, "crash");
            } else {
              set(State::kDown);  // SIGKILL also ends a paused process
            }
            break;
          case FaultAction::kStop:
            if (require(State::kUp, "stop")) set(State::kDown);
            break;
          case FaultAction::kPause:
            if (require(State::kUp, "pause")) set(State::kPaused);
            break;
          case FaultAction::kRestart:
            if (require(State::kDown, "restart")) set(State::kUp);
            break;
          case FaultAction::kResume:
            if (require(State::kPaused, "resume")) set(State::kUp);
            break;
          case FaultAction::kDemote:
            require(State::kUp, "demote");
            break;
          default:
            break;
        }
      } else if (f.action == FaultAction::kCrash || f.action == FaultAction::kStop) {
        if (require(State::kDown, "the automatic restart (`for`)")) set(State::kUp);
      } else if (f.action == FaultAction::kPause) {
        if (require(State::kPaused, "the automatic resume (`for`)")) set(State::kUp);
      }
    }
  }

  const Scenario& s_;
  const LineOf& line_of_;
  SourceProblems* problems_;
  int failovers_ = 0;  // coordination-failover faults seen so far
};

}  // namespace

void CheckScenario(const Scenario& scenario, const LineOf& line_of, SourceProblems* problems) {
  Checker(scenario, line_of, problems).Run();
}

}  // namespace kvchaos::harness
