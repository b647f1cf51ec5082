// One seed's world: builds the runtime, network, Redis and nodes, schedules the faults, runs,
// shuts everything down cleanly (crashed incarnations included), then hands the records to the
// checkers (sim/checkers.h). Node threads touch world state only between scheduling points, and
// exactly one simulated thread runs at a time, so the world needs no locks of its own.
#include "sim/world.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "core/election/leader_elector.h"
#include "sim/checkers.h"
#include "sim/sim_coordination_client.h"
#include "sim/sim_redis.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {
namespace {

constexpr int64_t kMsNs = 1'000'000;

class World {
 public:
  explicit World(const SimConfig& config);
  ~World();
  SimResult Run();

 private:
  struct Incarnation {
    int node = 0;
    int number = 0;
    Rng rng{0};
    std::unique_ptr<SimCoordinationClient> client;
    std::unique_ptr<election::LeaderElector> elector;
    Thread writer;
    bool stop = false;
    bool crashed = false;
    int acting = -1;    // index of the open acting interval
    int believing = -1; // index of the open believing interval
  };

  void StartNode(int node);
  void WriterLoop(Incarnation& inc);
  void OnBecomeLeader(Incarnation& inc, uint64_t token);
  void OnNoLongerLeader(Incarnation& inc);
  void RecordActing(Incarnation& inc, uint64_t token, TrueNs now, TrueNs deadline_true);
  void CloseActing(Incarnation& inc, TrueNs observed_false);
  void ApplyFault(const FaultAction& fault);
  void StartQuiet();
  int LeaderNode() const;
  int Resolve(const FaultAction& fault) const;
  void Teardown(SimResult& result);
  void Note(int node, std::string_view what, int64_t a = 0, int64_t b = 0, std::string_view detail = {});

  SimConfig config_;
  // Declared first so it is destroyed last: everything below uses it.
  std::unique_ptr<SimRuntime> runtime_;
  int backend_node_ = 0;
  Rng world_rng_;
  std::unique_ptr<SimNetwork> network_;
  std::unique_ptr<SimRedis> redis_;
  std::vector<std::unique_ptr<Incarnation>> incarnations_;
  std::vector<Incarnation*> current_;  // per node; null while crashed
  std::vector<int> pauses_;            // per node: pause faults in effect
  std::vector<int> backend_outages_;   // 0/1 per kind: unreachable, down
  int64_t backend_drift_ppm_ = 0;
  bool backend_slewing_ = false;
  int64_t quiet_start_ns_ = 0;
  bool finished_ = false;
  bool leak_on_exit_ = false;
  Records records_;
  std::vector<Thread> admin_threads_;  // scenario demotes and graceful stops, joined at teardown
};

World::World(const SimConfig& config)
    : config_(config), world_rng_(Rng(config.seed).Split("world")) {
  SimRuntimeOptions options;
  options.seed = config.seed;
  options.buggify = config.buggify;
  options.checkpoint_every = config.checkpoint_every;
  runtime_ = std::make_unique<SimRuntime>(options);
  if (config.trace_sink) runtime_->trace().SetSink(config.trace_sink);
  if (config.capture_end > config.capture_begin) runtime_->trace().CaptureWindow(config.capture_begin, config.capture_end);
  Rng clocks = Rng(config.seed).Split("clocks");
  // With clock faults on, every clock of the run is a bad one (drift within fault_drift_ppm);
  // otherwise within max_drift_ppm (an ordinary crystal).
  const int64_t drift = (config.faults & FaultBit(FaultKind::kClock)) ? config.fault_drift_ppm : config.max_drift_ppm;
  for (int i = 0; i < config.nodes; ++i) {
    // Nodes booted at different times.
    SimClock clock(Duration(clocks.UniformInt(1, 3600) * 1'000'000'000LL), clocks.UniformInt(-drift, drift),
                   Duration(1'700'000'000'000'000'000LL + clocks.UniformInt(-500, 500) * kMsNs));
    runtime_->AddNode("n" + std::to_string(i + 1), clock);
  }
  backend_drift_ppm_ = clocks.UniformInt(-drift, drift);
  backend_node_ = runtime_->AddNode("redis", SimClock(Duration(clocks.UniformInt(1, 3600) * 1'000'000'000LL),
                                                      backend_drift_ppm_, Duration(1'700'000'000'000'000'000LL)));
  network_ = std::make_unique<SimNetwork>(*runtime_, Rng(config.seed).Split("network"), config.nodes);
  redis_ = std::make_unique<SimRedis>(*runtime_, backend_node_, config.bug != PlantedBug::kFenceOff);
  current_.assign(static_cast<size_t>(config.nodes), nullptr);
  pauses_.assign(static_cast<size_t>(config.nodes), 0);
  backend_outages_.assign(2, 0);
  records_.nodes = config.nodes;
}

World::~World() {
  if (leak_on_exit_) {
    // A node that could not be shut down still has threads on these objects; the runtime's
    // destructor unwinds them, so the objects must stay (a bug report, not a normal exit).
    for (auto& inc : incarnations_) {
      (void)inc->elector.release();
      (void)inc->client.release();
    }
  }
}

void World::Note(int node, std::string_view what, int64_t a, int64_t b, std::string_view detail) {
  runtime_->trace().Event(runtime_->true_now(), node, 0, what, a, b, detail);
}

void World::StartNode(int node) {
  auto inc = std::make_unique<Incarnation>();
  Incarnation* p = inc.get();
  p->node = node;
  p->number = 1 + static_cast<int>(std::count_if(incarnations_.begin(), incarnations_.end(),
                                                 [&](const auto& other) { return other->node == node; }));
  p->rng = Rng(config_.seed).Split("node").Split(static_cast<uint64_t>(node * 1000 + p->number));
  p->client = std::make_unique<SimCoordinationClient>(*runtime_, *network_, *redis_, node,
                                                      SimClientOptions{config_.backend_timeout_ms, config_.backend_retries});
  election::LeaderElectorOptions options;
  options.node_id = runtime_->node_name(node);
  options.lease_ms = config_.lease_ms;
  options.loop_interval_ms = config_.loop_ms;
  options.safety_margin_ms = config_.safety_margin_ms;
  options.forbid_campaign_time_ms = config_.forbid_campaign_ms;
  options.testing.no_safety_margin = config_.bug == PlantedBug::kNoSafetyMargin;
  options.testing.lease_from_response = config_.bug == PlantedBug::kLeaseFromResponse;
  options.testing.serve_while_demoting = config_.bug == PlantedBug::kServeWhileDemoting;
  election::LeaderElectorCallbacks callbacks;
  callbacks.on_become_leader = [this, p](election::FencingToken token) { OnBecomeLeader(*p, token); };
  callbacks.on_no_longer_leader = [this, p] { OnNoLongerLeader(*p); };
  p->elector = std::make_unique<election::LeaderElector>(*runtime_, *p->client, options, callbacks);
  incarnations_.push_back(std::move(inc));
  current_[static_cast<size_t>(node)] = p;
  Note(node, "node-start", p->number);
  SimRuntime::NodeScope scope(*runtime_, node);
  Status s = p->elector->Start();
  if (!s.ok()) throw std::runtime_error("node " + options.node_id + ": elector did not start: " + s.ToString());
  p->writer = runtime_->SpawnOn(node, "kvc_dataplane", [this, p] { WriterLoop(*p); });
}

void World::OnBecomeLeader(Incarnation& inc, uint64_t token) {
  // Recovery, as MetaNode's: read the fenced resource's newest token, have the elector raise the
  // term's token above it when the grant is not (a Redis restarted empty counts from 1 again),
  // then raise the fence to the term's token before serving. Retried within the term; a term
  // that cannot be fenced within a lease is given up (the node demotes itself, as MetaNode does).
  uint64_t term_token = token;
  const MonoTime give_up = runtime_->Now() + Millis(config_.lease_ms);
  while (true) {
    Status s;
    Result<uint64_t> newest = inc.client->FenceNewest();
    if (newest.ok()) {
      Result<election::FencingToken> raised = inc.elector->RaiseTokenAbove(term_token, *newest);
      if (raised.ok()) {
        term_token = *raised;
        s = inc.client->FencedWrite(term_token);
      } else {
        s = raised.status();
      }
    } else {
      s = newest.status();
    }
    Note(inc.node, "promote-fence", static_cast<int64_t>(term_token), static_cast<int64_t>(s.code()));
    if (s.ok()) break;
    if (inc.stop || inc.elector->Snapshot().token != term_token) return;  // the term is over
    if (runtime_->Now() >= give_up) {
      (void)inc.elector->Demote(Millis(config_.lease_ms));
      return;
    }
    runtime_->SleepFor(Millis(config_.loop_ms));
  }
  runtime_->SleepFor(Duration(static_cast<int64_t>(inc.rng.UniformInt(0, 5)) * kMsNs));
  records_.believing.push_back(Interval{inc.node, term_token, runtime_->true_now(), runtime_->true_now(), -1});
  inc.believing = static_cast<int>(records_.believing.size()) - 1;
}

void World::OnNoLongerLeader(Incarnation& inc) {
  if (inc.believing >= 0) {
    records_.believing[static_cast<size_t>(inc.believing)].end = runtime_->true_now();
    inc.believing = -1;
  }
  // Waits for in-flight requests before clearing state.
  runtime_->SleepFor(Duration(static_cast<int64_t>(inc.rng.UniformInt(0, config_.drain_max_ms)) * kMsNs));
}

void World::RecordActing(Incarnation& inc, uint64_t token, TrueNs now, TrueNs deadline_true) {
  if (inc.acting >= 0 && records_.acting[static_cast<size_t>(inc.acting)].token != token) CloseActing(inc, now);
  if (inc.acting < 0) {
    records_.acting.push_back(Interval{inc.node, token, now, now, deadline_true});
    inc.acting = static_cast<int>(records_.acting.size()) - 1;
    Note(inc.node, "acting-start", static_cast<int64_t>(token));
  }
  Interval& interval = records_.acting[static_cast<size_t>(inc.acting)];
  interval.last_true = now;
  interval.deadline_true = deadline_true;
}

void World::CloseActing(Incarnation& inc, TrueNs observed_false) {
  if (inc.acting < 0) return;
  Interval& interval = records_.acting[static_cast<size_t>(inc.acting)];
  // Acting ended somewhere in (last_true, observed_false]; the lease deadline bounds it when the
  // elector honours it, and a later "true" answer proves it did not.
  TrueNs end = observed_false;
  if (interval.deadline_true >= 0) end = std::min(end, interval.deadline_true);
  interval.end = std::max(interval.last_true, end);
  Note(inc.node, "acting-end", static_cast<int64_t>(interval.token), interval.end);
  inc.acting = -1;
}

void World::WriterLoop(Incarnation& inc) {
  election::LeaderElector& elector = *inc.elector;
  const Duration interval = Millis(config_.write_interval_ms);
  while (!inc.stop) {
    const election::LeadershipSnapshot snap = elector.Snapshot();
    if (!snap.is_leader) {
      CloseActing(inc, runtime_->true_now());
      if (snap.state == election::ElectorState::kLeader) {
        runtime_->SleepFor(interval);  // leader state, lease ran out: the check thread ends it soon
      } else {
        elector.WaitForState(election::ElectorState::kLeader, runtime_->Now() + std::chrono::seconds(1));
      }
      continue;
    }
    uint64_t token = snap.token != 0 ? snap.token : elector.CurrentToken();
    const TrueNs now = runtime_->true_now();
    const TrueNs deadline_true =
        snap.lease_deadline ? runtime_->clock(inc.node).TrueWhenMonoReaches(*snap.lease_deadline, 0) : -1;
    RecordActing(inc, token, now, deadline_true);
    ++records_.local_writes_accepted;
    // Handling the request takes a moment; a pause here sends the write late, with an old token.
    runtime_->SleepFor(Duration(static_cast<int64_t>(inc.rng.UniformInt(0, 5)) * kMsNs));
    // The resource counts accepted and rejected writes.
    const Status written = inc.client->FencedWrite(token);
    if (written.code() == StatusCode::kStaleFencingToken && elector.IsLeader() && elector.CurrentToken() == token) {
      // As MetaNode: the fence refuses the current term's own token (a newer one reached it after
      // the term fenced it), so this term can never write again: it steps down.
      Note(inc.node, "fenced-out-step-down", static_cast<int64_t>(token));
      (void)elector.Demote(Millis(config_.loop_ms));
      CloseActing(inc, runtime_->true_now());
    }
    if (inc.stop) break;
    runtime_->SleepFor(interval);
  }
  CloseActing(inc, runtime_->true_now());
}

int World::LeaderNode() const {
  for (const Incarnation* inc : current_) {
    if (inc != nullptr && inc->acting >= 0) return inc->node;
  }
  return -1;
}

int World::Resolve(const FaultAction& fault) const {
  if (fault.target_leader) {
    const int leader = LeaderNode();
    if (leader >= 0) return leader;
  }
  if (fault.target_follower) {
    const int leader = LeaderNode();
    for (int n = 0; n < config_.nodes; ++n) {
      if (n != leader && current_[static_cast<size_t>(n)] != nullptr) return n;
    }
  }
  return fault.node;
}

void World::ApplyFault(const FaultAction& f) {
  if (finished_ || runtime_->true_now() >= quiet_start_ns_) return;
  const int node = Resolve(f);
  const TrueNs now = runtime_->true_now();
  records_.faults.push_back(FaultRecord{now, now + f.duration_ns, f.kind, node, f.variant});
  Note(node, "fault", static_cast<int64_t>(f.kind), f.variant, FaultKindName(f.kind));
  const TrueNs end = now + f.duration_ns;
  switch (f.kind) {
    case FaultKind::kCrash: {
      Incarnation* inc = current_[static_cast<size_t>(node)];
      if (inc == nullptr) break;  // already down
      runtime_->CrashNode(node);
      inc->crashed = true;
      CloseActing(*inc, now);
      if (inc->believing >= 0) records_.believing[static_cast<size_t>(inc->believing)].end = now;
      inc->believing = -1;
      current_[static_cast<size_t>(node)] = nullptr;
      runtime_->At(end, [this, node] {
        if (!finished_ && current_[static_cast<size_t>(node)] == nullptr) StartNode(node);
      });
      break;
    }
    case FaultKind::kPause:
      ++pauses_[static_cast<size_t>(node)];
      runtime_->SetPaused(node, true);
      runtime_->At(end, [this, node] {
        if (--pauses_[static_cast<size_t>(node)] == 0) runtime_->SetPaused(node, false);
      });
      break;
    case FaultKind::kPartition: {
      if (f.variant == 3) {
        network_->link(node, Direction::kFromBackend).extra_ns = f.amount;
        const TrueNs cut = now + f.duration_ns / 3;
        runtime_->At(cut, [this, node] {
          network_->link(node, Direction::kFromBackend).extra_ns = 0;
          network_->link(node, Direction::kToBackend).partitioned = true;
          network_->link(node, Direction::kFromBackend).partitioned = true;
        });
        runtime_->At(std::max(end, cut), [this, node] {
          network_->link(node, Direction::kToBackend).partitioned = false;
          network_->link(node, Direction::kFromBackend).partitioned = false;
        });
        break;
      }
      const bool to = f.variant != 2, from = f.variant != 1;
      if (to) network_->link(node, Direction::kToBackend).partitioned = true;
      if (from) network_->link(node, Direction::kFromBackend).partitioned = true;
      runtime_->At(end, [this, node, to, from] {
        if (to) network_->link(node, Direction::kToBackend).partitioned = false;
        if (from) network_->link(node, Direction::kFromBackend).partitioned = false;
      });
      break;
    }
    case FaultKind::kBackendOutage:
    case FaultKind::kBackendWipe: {
      const bool unreachable = f.kind == FaultKind::kBackendOutage && f.variant == 0;
      if (unreachable) {
        ++backend_outages_[0];
        for (int n = 0; n < config_.nodes; ++n) {
          network_->link(n, Direction::kToBackend).partitioned = true;
          network_->link(n, Direction::kFromBackend).partitioned = true;
        }
        runtime_->At(end, [this] {
          if (--backend_outages_[0] == 0) {
            for (int n = 0; n < config_.nodes; ++n) {
              network_->link(n, Direction::kToBackend).partitioned = false;
              network_->link(n, Direction::kFromBackend).partitioned = false;
            }
          }
        });
      } else if (redis_->up()) {
        redis_->Crash();
        const bool persistent = f.kind == FaultKind::kBackendOutage;
        // Wipe variant 1 (scenarios): Redis comes back empty, the fenced indexer keeps its state.
        const bool keep_fence = f.kind == FaultKind::kBackendWipe && f.variant == 1;
        runtime_->At(end, [this, persistent, keep_fence] {
          if (!redis_->up()) redis_->Restart(persistent, keep_fence);
        });
      }
      break;
    }
    case FaultKind::kClock:
      if (f.variant == 0) runtime_->SetDriftPpm(node, f.amount);
      if (f.variant == 1) {
        backend_drift_ppm_ = f.amount;
        if (!backend_slewing_) runtime_->SetDriftPpm(backend_node_, f.amount);
      }
      if (f.variant == 4 && !backend_slewing_) {  // a slew: fast drift for a moment, then back
        backend_slewing_ = true;
        runtime_->SetDriftPpm(backend_node_, backend_drift_ppm_ + f.amount);
        runtime_->At(end, [this] {
          backend_slewing_ = false;
          runtime_->SetDriftPpm(backend_node_, backend_drift_ppm_);
        });
      }
      if (f.variant == 2) runtime_->StepWall(node, Duration(f.amount));
      if (f.variant == 3) runtime_->StepMonoForward(node, Duration(f.amount));
      break;
    case FaultKind::kBackendClock:
      runtime_->StepWall(backend_node_, Duration(f.amount));
      break;
    case FaultKind::kNet: {
      const Direction dir = f.variant % 2 == 0 ? Direction::kToBackend : Direction::kFromBackend;
      LinkParams& link = network_->link(node, dir);
      const int what = f.variant / 2;
      if (what == 0) link.loss = f.probability;
      if (what == 1) link.duplicate = f.probability;
      if (what == 2) link.extra_ns = f.amount;
      runtime_->At(end, [this, node, dir, what] {
        LinkParams& l = network_->link(node, dir);
        if (what == 0) l.loss = 0;
        if (what == 1) l.duplicate = 0;
        if (what == 2) l.extra_ns = 0;
      });
      break;
    }
    case FaultKind::kSlow:
      runtime_->SetSlowCpu(node, Duration(f.amount));
      runtime_->At(end, [this, node] { runtime_->SetSlowCpu(node, Duration::zero()); });
      break;
    case FaultKind::kDemote: {
      Incarnation* inc = current_[static_cast<size_t>(node)];
      if (inc == nullptr) break;
      election::LeaderElector* elector = inc->elector.get();
      // IsLeader() is false once Demote returns: the node stops acting then, not when its writer
      // next looks (a writer asleep between writes is not accepting any).
      admin_threads_.push_back(runtime_->SpawnOn(node, "sim_demote", [this, inc, elector] {
        (void)elector->Demote();
        CloseActing(*inc, runtime_->true_now());
      }));
      break;
    }
    case FaultKind::kStop: {
      // SIGTERM: the elector stops (a leader demotes and unlocks first), the writer exits; the
      // node counts as down until it is started again at the end of the fault.
      Incarnation* inc = current_[static_cast<size_t>(node)];
      if (inc == nullptr) break;
      inc->stop = true;
      current_[static_cast<size_t>(node)] = nullptr;
      election::LeaderElector* elector = inc->elector.get();
      // A stopping service refuses new requests first (the writer sees `stop`), then the elector
      // demotes and unlocks: acting ends before the lock is released.
      CloseActing(*inc, now);
      admin_threads_.push_back(runtime_->SpawnOn(node, "sim_stop", [elector] { elector->Stop(); }));
      runtime_->At(end, [this, node] {
        if (!finished_ && current_[static_cast<size_t>(node)] == nullptr) StartNode(node);
      });
      break;
    }
  }
}

void World::StartQuiet() {
  // Everything heals: links, paused and slowed nodes, the backend; crashed nodes come back.
  Note(-1, "quiet-phase");
  network_->HealAll();
  std::fill(backend_outages_.begin(), backend_outages_.end(), 0);
  if (!redis_->up()) redis_->Restart(true);
  for (int node = 0; node < config_.nodes; ++node) {
    pauses_[static_cast<size_t>(node)] = 0;
    runtime_->SetPaused(node, false);
    runtime_->SetSlowCpu(node, Duration::zero());
    if (current_[static_cast<size_t>(node)] == nullptr) StartNode(node);
  }
}

void World::Teardown(SimResult& result) {
  finished_ = true;
  network_->HealAll();
  if (!redis_->up()) redis_->Restart(true);
  for (auto& inc : incarnations_) {
    if (inc->crashed) inc->client->CutOff();
  }
  for (int node = 0; node < config_.nodes; ++node) {
    runtime_->SetPaused(node, false);
    runtime_->SetSlowCpu(node, Duration::zero());
    runtime_->ReviveCrashed(node);
  }
  std::vector<Thread> stoppers;
  for (auto& inc : incarnations_) {
    inc->stop = true;
    election::LeaderElector* elector = inc->elector.get();
    stoppers.push_back(runtime_->SpawnOn(inc->node, "sim_stop", [elector] { elector->Stop(); }));
  }
  // Joining from the driver runs the simulation until each thread is done.
  for (Thread& t : admin_threads_) t.Join();
  for (Thread& t : stoppers) t.Join();
  for (auto& inc : incarnations_) inc->writer.Join();
  const std::string report = runtime_->ThreadReport();
  if (!report.empty()) {
    result.violations.push_back("shutdown: threads that never finished (deadlock?):\n" + report);
    leak_on_exit_ = true;
  }
}

SimResult World::Run() {
  // Host time through the real runtime, read only to report how fast the run went
  // (wall_seconds); it never enters the trace or any simulated decision.
  Runtime& host = Runtime::Real();
  const MonoTime wall_start = host.Now();
  SimResult result;
  result.seed = config_.seed;
  const int64_t duration_ns = config_.duration_ms * kMsNs;
  const int64_t lease_ns = config_.lease_ms * kMsNs;
  const int64_t bound_ns = (config_.liveness_bound_ms > 0 ? config_.liveness_bound_ms : 2 * config_.lease_ms) * kMsNs;
  const int64_t quiet_ns = std::max<int64_t>(static_cast<int64_t>(static_cast<double>(duration_ns) * config_.quiet_fraction),
                                             bound_ns + 2 * lease_ns);
  quiet_start_ns_ = std::max<int64_t>(0, duration_ns - quiet_ns);
  result.quiet_start_ns = quiet_start_ns_;

  FaultPlanOptions plan;
  plan.kinds = config_.faults;
  plan.nodes = config_.nodes;
  plan.chaos_start_ns = lease_ns;  // a first leader has been elected by then
  plan.chaos_end_ns = quiet_start_ns_;
  plan.lease_ns = lease_ns;
  plan.max_drift_ppm = config_.fault_drift_ppm;
  std::vector<FaultAction> faults = GenerateFaults(Rng(config_.seed).Split("faults"), plan);
  faults.insert(faults.end(), config_.explicit_faults.begin(), config_.explicit_faults.end());
  result.faults_injected = faults.size();
  for (const FaultAction& f : faults) runtime_->At(f.t, [this, f] { ApplyFault(f); });
  if (quiet_start_ns_ > 0) runtime_->At(quiet_start_ns_, [this] { StartQuiet(); });
  if (config_.test_perturb_at_ms >= 0) runtime_->At(config_.test_perturb_at_ms * kMsNs, [this] { Note(-1, "perturb"); });
  for (int node = 0; node < config_.nodes; ++node) {
    const TrueNs start = static_cast<TrueNs>(world_rng_.UniformInt(0, 2 * config_.loop_ms)) * kMsNs;
    runtime_->At(start, [this, node] {
      if (!finished_) StartNode(node);
    });
  }

  try {
    const SimRuntime::StopReason reason = runtime_->RunUntil(duration_ns);
    if (reason == SimRuntime::StopReason::kDeadlock) {
      result.violations.push_back("deadlock at " + std::to_string(runtime_->true_now() / kMsNs) + " ms:\n" +
                                  runtime_->ThreadReport());
    }
  } catch (const std::exception& e) {
    result.violations.push_back(std::string("simulator error: ") + e.what());
  }
  const TrueNs end_ns = runtime_->true_now();
  for (auto& inc : incarnations_) {
    if (!inc->crashed) CloseActing(*inc, end_ns);
    if (inc->believing >= 0) records_.believing[static_cast<size_t>(inc->believing)].end = end_ns;
  }
  records_.end_ns = end_ns;
  for (const auto* list : {&records_.believing, &records_.acting}) {
    for (const Interval& i : *list) {
      result.leadership.push_back(LeadershipInterval{i.node, i.start, i.end < 0 ? end_ns : i.end, list == &records_.acting});
    }
  }
  try {
    Teardown(result);
  } catch (const std::exception& e) {
    result.violations.push_back(std::string("shutdown error: ") + e.what());
    leak_on_exit_ = true;
  }

  records_.grants = redis_->grants();
  CheckerOptions check;
  check.lease_ns = lease_ns;
  check.quiet_start_ns = quiet_start_ns_;
  check.liveness_bound_ns = bound_ns;
  RunCheckers(records_, check, result);
  result.resource = redis_->resource().counters();
  result.token_regressions = redis_->token_regressions();
  result.grants = redis_->grants().size();
  result.local_writes_accepted = records_.local_writes_accepted;
  if (result.resource.stale_accepted > 0) {
    result.violations.push_back(std::to_string(result.resource.stale_accepted) + " stale write(s) accepted by the fenced resource");
  }
  result.holder_writes_rejected = redis_->holder_writes_rejected();
  if (result.holder_writes_rejected > 0) {
    // Worded as liveness: the lock holder could not write (harness/sim_mode.cc reads the prefix).
    result.violations.push_back("liveness: " + std::to_string(result.holder_writes_rejected) +
                                " write(s) of the lock holder's own term refused by the fence (its token is below "
                                "the fence: a counter reset nobody raised past?)");
  }
  if (result.token_regressions > 0) {
    result.violations.push_back(std::to_string(result.token_regressions) + " fencing token regression(s)");
  }
  result.simulated_ns = end_ns;
  result.trace_hash = runtime_->trace().hash();
  result.events = runtime_->trace().events();
  result.checkpoints = runtime_->trace().checkpoints();
  result.checkpoint_every = runtime_->trace().checkpoint_every();
  result.captured = runtime_->trace().captured();
  result.context_switches = runtime_->context_switches();
  result.network = network_->counters();
  result.buggify_fired = runtime_->BuggifyFired();
  result.wall_seconds = std::chrono::duration<double>(host.Now() - wall_start).count();
  return result;
}

}  // namespace

const char* PlantedBugName(PlantedBug bug) {
  switch (bug) {
    case PlantedBug::kNone: return "none";
    case PlantedBug::kNoSafetyMargin: return "no-safety-margin";
    case PlantedBug::kLeaseFromResponse: return "lease-from-response";
    case PlantedBug::kServeWhileDemoting: return "serve-while-demoting";
    case PlantedBug::kFenceOff: return "fence-off";
  }
  return "?";
}

std::vector<PlantedBug> AllPlantedBugs() {
  return {PlantedBug::kNoSafetyMargin, PlantedBug::kLeaseFromResponse, PlantedBug::kServeWhileDemoting,
          PlantedBug::kFenceOff};
}

Result<PlantedBug> ParsePlantedBug(std::string_view text) {
  for (PlantedBug bug : {PlantedBug::kNone, PlantedBug::kNoSafetyMargin, PlantedBug::kLeaseFromResponse,
                         PlantedBug::kServeWhileDemoting, PlantedBug::kFenceOff}) {
    if (text == PlantedBugName(bug)) return bug;
  }
  return Status::InvalidArgument("--bug: unknown planted bug '" + std::string(text) +
                                 "' (valid: none, no-safety-margin, lease-from-response, serve-while-demoting, fence-off)");
}

Status ValidateSimConfig(const SimConfig& c) {
  if (c.nodes < 1 || c.nodes > 64) return Status::InvalidArgument("--nodes must be in 1..64, got " + std::to_string(c.nodes));
  if (c.lease_ms <= 0) return Status::InvalidArgument("--lease-ms must be > 0, got " + std::to_string(c.lease_ms));
  if (c.loop_ms <= 0 || c.loop_ms >= c.lease_ms) {
    return Status::InvalidArgument("--loop-ms must be > 0 and < --lease-ms, got " + std::to_string(c.loop_ms));
  }
  if (c.duration_ms <= 0) return Status::InvalidArgument("--duration must be > 0");
  if (c.max_drift_ppm < 0 || c.max_drift_ppm > 100'000 || c.fault_drift_ppm < 0 || c.fault_drift_ppm > 100'000) {
    return Status::InvalidArgument("clock drifts must be in 0..100000 ppm");
  }
  if (c.quiet_fraction < 0 || c.quiet_fraction > 1) return Status::InvalidArgument("quiet fraction must be in [0, 1]");
  if (c.backend_timeout_ms < 1 || c.backend_retries < 0) {
    return Status::InvalidArgument("the backend client needs a timeout >= 1 ms and retries >= 0, got " +
                                   std::to_string(c.backend_timeout_ms) + " ms and " +
                                   std::to_string(c.backend_retries));
  }
  if (c.safety_margin_ms < -1 || c.safety_margin_ms >= c.lease_ms) {
    return Status::InvalidArgument("the safety margin must be -1 (default) or in 0..lease, got " +
                                   std::to_string(c.safety_margin_ms) + " ms");
  }
  if (c.forbid_campaign_ms < 0) return Status::InvalidArgument("the forbid-campaign time must be >= 0");
  return Status::Ok();
}

SimResult RunSimulation(const SimConfig& config) {
  Status s = ValidateSimConfig(config);
  if (!s.ok()) throw std::invalid_argument(s.message());
  World world(config);
  return world.Run();
}

std::string ReproCommand(const SimConfig& c) {
  std::string cmd = "kvchaos sim --seed " + std::to_string(c.seed) + " --nodes " + std::to_string(c.nodes) +
                    " --lease-ms " + std::to_string(c.lease_ms) + " --loop-ms " + std::to_string(c.loop_ms) +
                    " --duration " + std::to_string(c.duration_ms) + "ms --faults " + FaultListString(c.faults);
  if (c.bug != PlantedBug::kNone) cmd += std::string(" --bug ") + PlantedBugName(c.bug);
  if (!c.buggify) cmd += " --no-buggify";
  return cmd;
}

std::string SummaryLine(const SimResult& r) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "seed=%" PRIu64 " hash=%016" PRIx64 " events=%" PRIu64 " faults=%" PRIu64 " failovers=%zu unnecessary=%" PRIu64
                " stale_accepted=%" PRIu64 " stale_rejected=%" PRIu64 " token_regressions=%" PRIu64
                " dual_acting=%" PRIu64 " dual_believing=%" PRIu64 " leader_after_quiet_ms=%lld",
                r.seed, r.trace_hash, r.events, r.faults_injected, r.failovers.size(), r.unnecessary_failovers,
                r.resource.stale_accepted, r.resource.stale_rejected, r.token_regressions, r.dual_acting_windows,
                r.dual_believing_windows,
                static_cast<long long>(r.leader_after_quiet_ns < 0 ? -1 : r.leader_after_quiet_ns / kMsNs));
  std::string line(buf);
  if (r.ok()) {
    line += " OK";
  } else {
    line += " VIOLATION: " + r.violations.front().substr(0, r.violations.front().find('\n'));
  }
  return line;
}

}  // namespace kvchaos::sim
