// Real-mode fault application; see fault_applier.h.
#include "harness/real/fault_applier.h"

#include <algorithm>
#include <chrono>

#include "core/client/leader_discovery.h"
#include "harness/real/workload.h"

namespace kvchaos::harness::real {
namespace {

// How long the sentinels may take to promote the replica (they need ~2-4 s: down-after 1 s).
constexpr Duration kPromotionTimeout = std::chrono::seconds(15);

// The mounts a store fault or store crash names (a backend name or "all").
bool Targets(const FaultEvent& f, const FaultfsMount& m) { return f.backend == "all" || m.name() == f.backend; }

std::string Where(const Scenario& s, const FaultEvent& f, std::string_view prefix) {
  return s.file + ":" + std::to_string(f.line) + ": " + std::string(prefix) + std::string(FaultActionName(f.action));
}

}  // namespace

Status TrackUnsyncedWrites(const Scenario& s, std::vector<std::unique_ptr<FaultfsMount>>& mounts) {
  for (auto& m : mounts) {
    const bool crashed = std::any_of(s.faults.begin(), s.faults.end(), [&](const FaultEvent& f) {
      return f.action == FaultAction::kStoreCrash && Targets(f, *m);
    });
    if (!crashed) continue;
    // POSIX's rule (dir_sync): a new name survives only once its directory was synced.
    Result<nlohmann::json> added = m->Control(
        {{"cmd", "add"},
         {"rule", {{"id", kPowerLossRuleId}, {"path", "**"}, {"action", "drop_unsynced"}, {"dir_sync", true}}}});
    if (!added.ok()) {
      return Status(added.status().code(), "backend " + m->name() + ": tracking unsynced writes for its store-crash: " +
                                               added.status().message());
    }
  }
  return Status::Ok();
}

FaultApplier::FaultApplier(const Scenario& scenario, uint64_t seed, FaultTargets targets, MonoTime t0,
                           Duration start_timeout, RunResult& result)
    : s_(scenario),
      rng_(Rng(seed).Split("real-faults")),
      seed_(seed),
      t_(targets),
      t0_(t0),
      start_timeout_(start_timeout),
      r_(result) {}

double FaultApplier::NowMs() const {
  return std::chrono::duration<double, std::milli>(Runtime::Real().Now() - t0_).count();
}

void FaultApplier::EndMetaSwap(Active& a, const std::string& where) {
  if (!a.swap || !meta_index_) return;
  Result<bool> back = sim::SwapBack(*meta_index_, *a.swap);
  if (!back.ok()) Fail(where + ": " + back.status().message());
  for (const std::string& k : a.swap->keys) swapped_keys_.erase(k);
  a.swap.reset();
}

void FaultApplier::Fail(const std::string& what) { r_.error += (r_.error.empty() ? "" : "; ") + what; }

int FaultApplier::AskLeader() {
  // Ask the cluster itself at the moment the fault fires (the observer's view may be 20 ms old).
  for (int i = 0; i < t_.cluster->size(); ++i) {
    if (t_.cluster->State(i) != NodeState::kUp) continue;
    Result<nlohmann::json> info =
        client::PostJson(t_.cluster->AdminEndpoint(i), "GetManagerClusterInfo", nlohmann::json::object(), 300);
    if (info.ok() && info->value("is_leader", false)) return i;
  }
  return t_.observer ? t_.observer->CurrentLeader() : -1;
}

std::vector<int> FaultApplier::Resolve(const NodeRef& ref, size_t step_index, std::string* target) {
  std::vector<int> out;
  switch (ref.kind) {
    case NodeRef::Kind::kIndex:
      out.push_back(ref.index);
      *target = "node " + std::to_string(ref.index);
      break;
    case NodeRef::Kind::kAll:
      for (int i = 0; i < t_.cluster->size(); ++i) out.push_back(i);
      *target = "all nodes";
      break;
    case NodeRef::Kind::kLeader: {
      const int leader = AskLeader();
      if (leader >= 0) out.push_back(leader);
      *target = leader >= 0 ? "leader (node " + std::to_string(leader) + ")" : "leader (none at that moment: not applied)";
      break;
    }
    case NodeRef::Kind::kFollower: {
      const int leader = AskLeader();
      std::vector<int> followers;
      for (int i = 0; i < t_.cluster->size(); ++i) {
        if (i != leader && t_.cluster->State(i) == NodeState::kUp) followers.push_back(i);
      }
      if (!followers.empty()) {
        // The seed picks which follower, so a rerun with the same seed hits the same one.
        out.push_back(followers[rng_.Split(step_index).Uniform(followers.size())]);
        *target = "follower (node " + std::to_string(out[0]) + ")";
      } else {
        *target = "follower (none up: not applied)";
      }
      break;
    }
    case NodeRef::Kind::kCoordination:
      *target = "coordination";
      break;
  }
  return out;
}

void FaultApplier::EndTracked(const Active& a, double end_ms) {
  r_.faults[a.applied_index].end_ms = end_ms;
  for (size_t i : a.mark_indexes) marks_[i].end_ms = end_ms;
}

void FaultApplier::StartEtcdOutage(const FaultEvent& f, AppliedFault* applied, FaultMark* mark) {
  EtcdController& etcd = *t_.etcd;
  if (f.coordination_member < 0) {
    // Every member frozen: nothing answers, and every member keeps its data.
    for (int m = 0; m < etcd.size(); ++m) etcd.Pause(m);
    return;
  }
  applied->target = "coordination member " + std::to_string(f.coordination_member);
  // The others keep a quorum: a client fails over to them, so this alone never makes a failover
  // necessary.
  mark->scope = sim::FaultScope::kCoordinationMember;
  if (f.member_pause.value_or(false)) {
    etcd.Pause(f.coordination_member);
  } else {
    etcd.Kill(f.coordination_member);
  }
}

void FaultApplier::EndEtcdOutage(const FaultEvent& f, const std::string& where) {
  EtcdController& etcd = *t_.etcd;
  if (f.coordination_member < 0) {
    for (int m = 0; m < etcd.size(); ++m) etcd.Resume(m);
  } else if (f.member_pause.value_or(false)) {
    etcd.Resume(f.coordination_member);
  } else if (Status s = etcd.Restart(f.coordination_member, start_timeout_); !s.ok()) {
    Fail(where + ": " + s.ToString());
  }
}

void FaultApplier::StartCoordinationBack(const std::string& where) {
  if (redis_down_) {
    if (Status s = t_.coordination_redis->Start(start_timeout_); !s.ok()) Fail(where + ": " + s.ToString());
    redis_down_ = false;
  } else {
    for (auto& node : *t_.proxies) {
      for (auto& proxy : node) proxy->Sever(false);
    }
  }
}

void FaultApplier::StartClockFault(const FaultEvent& f, const std::vector<int>& nodes, const std::string& where) {
  if (t_.clocks == nullptr) {
    Fail(where + ": the nodes run without the clock preload (a bug: clock faults start them under it)");
    return;
  }
  for (int i : nodes) {
    const MonoTime now = Runtime::Real().Now();
    const Status s = f.action == FaultAction::kClockJump ? t_.clocks->Jump(i, now, f.jump)
                                                          : t_.clocks->SetDriftPpm(i, now, f.drift_ppm);
    if (!s.ok()) Fail(where + " on node " + std::to_string(i) + ": " + s.ToString());
  }
}

void FaultApplier::EndClockFault(const FaultEvent& f, const std::vector<int>& nodes, const std::string& where) {
  // As in sim mode: a drift's window ends at true rate (the time it gained or lost stays); a
  // jump is a step and is not undone.
  if (f.action != FaultAction::kClockDrift || t_.clocks == nullptr) return;
  for (int i : nodes) {
    if (Status s = t_.clocks->SetDriftPpm(i, Runtime::Real().Now(), 0); !s.ok()) {
      Fail(where + " on node " + std::to_string(i) + ": " + s.ToString());
    }
  }
}

void FaultApplier::Start(size_t step_index, const TimelineStep& step) {
  const FaultEvent& f = s_.faults[step.fault_index];
  Active active;
  AppliedFault applied{f.fault_class, "", NowMs(), std::nullopt};
  FaultMark mark{f.fault_class, applied.start_ms, std::nullopt, -1, false, sim::FaultScope::kNodeProcess};
  const std::string where = Where(s_, f, "");
  NodeCluster& cluster = *t_.cluster;
  switch (f.action) {
    case FaultAction::kCrash:
    case FaultAction::kStop:
    case FaultAction::kPause:
    case FaultAction::kDemote: {
      active.nodes = Resolve(f.node, step_index, &applied.target);
      applied.start_ms = mark.start_ms = NowMs();
      for (int i : active.nodes) {
        if (f.action == FaultAction::kCrash) cluster.Crash(i);
        if (f.action == FaultAction::kStop) cluster.Stop(i);
        if (f.action == FaultAction::kPause) cluster.Pause(i);
        if (f.action == FaultAction::kDemote) {
          if (Status s = cluster.Demote(i); !s.ok()) Fail(where + ": LeaderDemote on node " + std::to_string(i) + ": " + s.ToString());
        }
      }
      mark.stops_node = f.action == FaultAction::kCrash || f.action == FaultAction::kPause;
      break;
    }
    case FaultAction::kRestart:
    case FaultAction::kResume: {
      std::vector<int> nodes = Resolve(f.node, step_index, &applied.target);
      // A crash, stop or pause given without `for` ends here.
      for (auto it = active_.begin(); it != active_.end();) {
        const FaultAction started = s_.faults[it->first.first].action;
        const bool undone = f.action == FaultAction::kResume ? started == FaultAction::kPause
                                                              : started == FaultAction::kCrash || started == FaultAction::kStop;
        const bool overlaps = std::any_of(it->second.nodes.begin(), it->second.nodes.end(), [&](int n) {
          return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
        });
        if (undone && overlaps) {
          EndTracked(it->second, NowMs());
          it = active_.erase(it);
        } else {
          ++it;
        }
      }
      for (int i : nodes) {
        if (f.action == FaultAction::kResume) {
          cluster.Resume(i);
        } else if (cluster.State(i) == NodeState::kDown) {
          if (Status s = cluster.Restart(i, start_timeout_); !s.ok()) Fail(where + ": " + s.ToString());
        }
      }
      // Nothing to end later and no mark of its own: it ends another fault.
      r_.faults.push_back(applied);
      return;
    }
    case FaultAction::kCoordinationOutage:
      applied.target = "coordination";
      // Paused, Redis keeps its state; killed, it comes back empty (locks and counters lost).
      mark.scope = f.persistence ? sim::FaultScope::kCoordinationOutage : sim::FaultScope::kCoordinationState;
      if (t_.etcd != nullptr) {
        StartEtcdOutage(f, &applied, &mark);
      } else if (f.persistence) {
        // Unreachable with its data kept: requests and replies are lost (as in sim mode), through
        // every node's proxy; Redis itself keeps running.
        for (auto& node : *t_.proxies) {
          for (auto& proxy : node) proxy->Sever(true);
        }
      } else {
        t_.coordination_redis->Kill();  // it comes back empty at the end of the window
        redis_down_ = true;
      }
      break;
    case FaultAction::kCoordinationFailover:
      applied.target = "coordination primary";
      if (f.length) {
        // The replica falls behind for the window; the primary dies at its end (EndFault). What was
        // written meanwhile — lock renewals, new tokens — is lost: the backend's state goes back.
        mark.scope = sim::FaultScope::kCoordinationState;
        if (Status s = t_.sentinel->CutReplication(); !s.ok()) Fail(where + ": " + s.ToString());
      } else {
        // The replica is in sync: it is an outage until the promotion, which the mark spans.
        mark.scope = sim::FaultScope::kCoordinationOutage;
        if (Status s = t_.sentinel->Failover(kPromotionTimeout); !s.ok()) Fail(where + ": " + s.ToString());
        mark.end_ms = applied.end_ms = NowMs();
      }
      break;
    case FaultAction::kStoreCrash: {
      mark.scope = sim::FaultScope::kStore;
      // The power loss itself: each mount drops what was not made durable (TrackUnsyncedWrites
      // has followed it since the run began) and keeps serving, as a storage that came back.
      applied.target = "backend " + f.backend;
      const auto crash = [&] {
        for (auto& m : *t_.mounts) {
          if (!Targets(f, *m)) continue;
          Result<nlohmann::json> crashed = m->Control({{"cmd", "crash"}});
          if (!crashed.ok()) {
            Fail(where + ": crash of backend " + m->name() + ": " + crashed.status().message());
            continue;
          }
          applied.target += "; " + m->name() + ": " +
                            std::to_string(crashed->value("removed", nlohmann::json::array()).size()) +
                            " unsynced files removed, " + std::to_string(crashed->value("bytes_restored", 0)) +
                            " bytes restored";
        }
      };
      if (t_.workload) {
        t_.workload->LosePower(crash);
      } else {
        crash();
      }
      break;
    }
    case FaultAction::kStoreFault: {
      mark.scope = sim::FaultScope::kStore;
      applied.target = "backend " + f.backend;
      active.rule_id = "f" + std::to_string(step.fault_index) + "-" + std::to_string(step.occurrence);
      for (auto& m : *t_.mounts) {
        if (!Targets(f, *m)) continue;
        Result<nlohmann::json> added = m->Control({{"cmd", "add"}, {"rule", StoreFaultRuleJson(active.rule_id, f.rule)}});
        if (!added.ok()) {
          Fail(where + ": " + added.status().message());
          continue;
        }
        active.mounts.push_back(m.get());
      }
      break;
    }
    case FaultAction::kPartition:
    case FaultAction::kNetwork: {
      // Through the runner's proxies on the node's link to coordination and/or the clients' links
      // to it: a partition blocks (or resets) them; a network fault delays bytes (loss is TCP's
      // retransmission wait), as the simulator's network fault degrades those links.
      active.nodes = Resolve(f.node, step_index, &applied.target);
      const std::string how = f.partition_reset ? std::string("connections reset")
                                                : std::string(PartitionDirectionName(f.partition_direction));
      applied.target += (f.action == FaultAction::kNetwork ? " on its links to " : " from ") +
                        (f.coordination_member >= 0 ? "coordination member " + std::to_string(f.coordination_member)
                                                    : std::string(PartitionFromName(f.partition_from))) +
                        " (" + how + ")";
      applied.start_ms = mark.start_ms = NowMs();
      const bool node_sends = f.partition_direction != PartitionDirection::kInbound;
      const bool node_receives = f.partition_direction != PartitionDirection::kOutbound;
      const LinkQuality degraded{.delay = f.net_delay, .jitter = f.net_jitter, .loss = f.net_loss,
                                 .bandwidth = f.net_bandwidth};
      for (int i : active.nodes) {
        for (const LinkEnd& link : LinksOf(i, f.partition_from, f.coordination_member)) {
          // The node is the client of its coordination link and the server of the clients' links.
          const bool to_server = link.node_is_client ? node_sends : node_receives;
          const bool to_client = link.node_is_client ? node_receives : node_sends;
          if (f.action == FaultAction::kNetwork) {
            link.proxy->Degrade(to_server ? degraded : LinkQuality{}, to_client ? degraded : LinkQuality{},
                                rng_.NextU64());
          } else if (f.partition_reset) {
            link.proxy->Reset(true);
          } else {
            link.proxy->Block(to_server, to_client);
          }
        }
      }
      // Cut from one etcd member, the node's client fails over to the others: like that member
      // being down, it names a cause but never makes a failover necessary.
      mark.scope = f.coordination_member >= 0                  ? sim::FaultScope::kCoordinationMember
                   : f.partition_from == PartitionFrom::kNodes ? sim::FaultScope::kNodePeers
                                                               : sim::FaultScope::kNodeCoordination;
      break;
    }
    case FaultAction::kHeal:
      applied.target = "all partitions";
      for (int i = 0; i < t_.cluster->size(); ++i) {
        for (const LinkEnd& link : LinksOf(i, PartitionFrom::kAll)) {
          link.proxy->Block(false, false);
          link.proxy->Reset(false);
        }
      }
      for (auto it = active_.begin(); it != active_.end();) {
        if (s_.faults[it->first.first].action != FaultAction::kPartition) {
          ++it;
          continue;
        }
        EndTracked(it->second, NowMs());
        it = active_.erase(it);
      }
      r_.faults.push_back(applied);
      return;
    case FaultAction::kClockDrift:
    case FaultAction::kClockJump:
      active.nodes = Resolve(f.node, step_index, &applied.target);
      applied.start_ms = mark.start_ms = NowMs();
      StartClockFault(f, active.nodes, where);
      mark.scope = sim::FaultScope::kNodeClock;
      break;
    case FaultAction::kMetaSwap: {
      mark.scope = sim::FaultScope::kStore;
      if (!meta_index_) {
        Result<std::unique_ptr<meta::MetaIndexer>> opened = meta::OpenMetaIndexer(t_.meta_index_uri);
        if (!opened.ok()) {
          Fail(where + ": opening the meta index " + t_.meta_index_uri + ": " + opened.status().message());
          return;
        }
        meta_index_ = std::move(*opened);
      }
      // The same choice as sim mode's: the seed's stream for the n-th swap, among committed entries.
      Rng rng = Rng(seed_).Split("meta-swap").Split(meta_swaps_);
      Result<sim::MetaSwap> swap = sim::SwapCacheEntries(*meta_index_, rng, swapped_keys_);
      if (swap.ok()) {
        ++meta_swaps_;
        swapped_keys_.insert(swap->keys.begin(), swap->keys.end());
        applied.target = swap->keys[0] + " <-> " + swap->keys[1];
        active.swap = std::move(*swap);
      } else if (swap.status().code() == StatusCode::kNotFound) {
        applied.target = swap.status().message();  // too early in the run: nothing to swap, not a failure
      } else {
        Fail(where + ": " + swap.status().message());
      }
      break;
    }
    case FaultAction::kSlow:
      // The loader rejects this for mode real (scenario_checks.cc); reaching here is a bug.
      Fail(where + ": not available in real mode (the scenario checks should have refused it)");
      return;
  }
  active.applied_index = r_.faults.size();
  r_.faults.push_back(applied);
  // One mark per node the fault hit, so each can explain that node's failover.
  if (active.nodes.empty()) {
    mark.node = -1;
    active.mark_indexes.push_back(marks_.size());
    marks_.push_back(mark);
  }
  for (int node : active.nodes) {
    mark.node = node;
    active.mark_indexes.push_back(marks_.size());
    marks_.push_back(mark);
  }
  // A demote, a store crash, a clock jump or an in-sync failover happens at once: nothing to end later.
  const bool one_off = f.action == FaultAction::kDemote || f.action == FaultAction::kStoreCrash ||
                       ((f.action == FaultAction::kClockJump || f.action == FaultAction::kCoordinationFailover) && !f.length);
  if (!one_off) {
    active_[{step.fault_index, step.occurrence}] = std::move(active);
  }
}

void FaultApplier::End(const TimelineStep& step) {
  auto it = active_.find({step.fault_index, step.occurrence});
  if (it == active_.end()) return;
  const FaultEvent& f = s_.faults[step.fault_index];
  Active& a = it->second;
  const std::string where = Where(s_, f, "end of ");
  switch (f.action) {
    case FaultAction::kCrash:
    case FaultAction::kStop:
      for (int i : a.nodes) {
        if (Status s = t_.cluster->Restart(i, start_timeout_); !s.ok()) Fail(where + ": " + s.ToString());
      }
      break;
    case FaultAction::kPause:
      for (int i : a.nodes) t_.cluster->Resume(i);
      break;
    case FaultAction::kPartition:
      for (int i : a.nodes) {
        for (const LinkEnd& link : LinksOf(i, f.partition_from, f.coordination_member)) {
          link.proxy->Block(false, false);
          link.proxy->Reset(false);
        }
      }
      break;
    case FaultAction::kNetwork:
      for (int i : a.nodes) {
        for (const LinkEnd& link : LinksOf(i, f.partition_from, f.coordination_member)) link.proxy->Degrade({}, {}, 0);
      }
      break;
    case FaultAction::kCoordinationOutage:
      if (t_.etcd != nullptr) {
        EndEtcdOutage(f, where);
      } else {
        StartCoordinationBack(where);
      }
      break;
    case FaultAction::kCoordinationFailover:
      // Leadership is disturbed from the primary's death, not from the replica falling behind:
      // failovers are timed from here.
      for (size_t i : a.mark_indexes) marks_[i].start_ms = NowMs();
      if (Status s = t_.sentinel->Failover(kPromotionTimeout); !s.ok()) Fail(where + ": " + s.ToString());
      break;
    case FaultAction::kStoreFault:
      for (FaultfsMount* m : a.mounts) {
        (void)m->Control({{"cmd", "remove"}, {"id", a.rule_id}});
        (void)m->Control({{"cmd", "release"}});
      }
      break;
    case FaultAction::kMetaSwap:
      EndMetaSwap(a, where);
      break;
    case FaultAction::kClockDrift:
    case FaultAction::kClockJump:
      EndClockFault(f, a.nodes, where);
      break;
    default:
      break;
  }
  EndTracked(a, NowMs());
  active_.erase(it);
}

std::vector<FaultApplier::LinkEnd> FaultApplier::LinksOf(int i, PartitionFrom from, int member) const {
  std::vector<LinkEnd> links;
  if (from != PartitionFrom::kNodes && static_cast<size_t>(i) < t_.proxies->size()) {
    const auto& proxies = (*t_.proxies)[static_cast<size_t>(i)];
    for (size_t m = 0; m < proxies.size(); ++m) {
      if (member < 0 || static_cast<size_t>(member) == m) links.push_back(LinkEnd{proxies[m].get(), true});
    }
  }
  if (from != PartitionFrom::kCoordination) {
    for (LinkProxy* p : t_.cluster->ClientPath(i)) links.push_back(LinkEnd{p, false});
  }
  return links;
}

void FaultApplier::HealAll() {
  for (auto& m : *t_.mounts) {
    (void)m->Control({{"cmd", "clear"}});
    (void)m->Control({{"cmd", "release"}});
  }
  if (t_.coordination_redis) StartCoordinationBack("restarting redis-server at the end");
  for (int i = 0; i < t_.cluster->size(); ++i) {
    for (const LinkEnd& link : LinksOf(i, PartitionFrom::kAll)) link.proxy->Heal();
    t_.cluster->Resume(i);
  }
  for (auto& [key, a] : active_) EndMetaSwap(a, "putting swapped meta records back at the end");
  const double end = NowMs();
  for (const auto& [key, a] : active_) EndTracked(a, end);
  active_.clear();
}

}  // namespace kvchaos::harness::real
