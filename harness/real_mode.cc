// Real mode of `kvchaos run`; see real_mode.h. This file sets up a run's processes, walks the
// timeline in true time (real/fault_applier.h carries out each fault) and turns what the observer
// and the workload saw into a RunResult.
#include "harness/real_mode.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>

#include "core/common/json_text.h"
#include "core/common/rng.h"
#include "core/election/coordination_uri.h"
#include "harness/elector_settings.h"
#include "harness/history_result.h"
#include "harness/real/connect_redirect.h"
#include "harness/real/etcd_controller.h"
#include "harness/real/fault_applier.h"
#include "harness/real/faultfs_mount.h"
#include "harness/real/lease_watcher.h"
#include "harness/real/node_cluster.h"
#include "harness/real/observer.h"
#include "harness/real/redis_controller.h"
#include "harness/real/sentinel_controller.h"
#include "harness/real/link_proxy.h"
#include "harness/real/workload.h"
#include "harness/runner_expectations.h"
#include "harness/run_result_start.h"
#include "harness/timeline.h"

namespace kvchaos::harness {
namespace {

namespace fs = std::filesystem;
using real::FaultfsMount;
using real::NodeCluster;

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the stop flag is set from a signal handler");
std::mutex g_options_mu;
RealModeOptions g_options;

constexpr Duration kStartTimeout = std::chrono::seconds(20);

RealModeOptions Options() {
  std::lock_guard<std::mutex> lock(g_options_mu);
  return g_options;
}

bool NeedsFaultfs(const Scenario& s) {
  for (const StoreBackend& b : s.topology.backends) {
    if (b.faultfs) return true;
  }
  return false;
}

bool HasClockFaults(const Scenario& s) {
  return std::any_of(s.faults.begin(), s.faults.end(), [](const FaultEvent& f) {
    return f.action == FaultAction::kClockJump || f.action == FaultAction::kClockDrift;
  });
}

// redis-sentinel: the nodes' links to the group need proxies of their own (and the connect
// preload, sentinel_controller.h) only when a fault cuts or degrades them.
bool CutsSentinelLinks(const Scenario& s) {
  if (s.topology.coordination != CoordinationKind::kRedisSentinel) return false;
  return std::any_of(s.faults.begin(), s.faults.end(), [](const FaultEvent& f) {
    return f.action == FaultAction::kHeal || ((f.action == FaultAction::kPartition || f.action == FaultAction::kNetwork) &&
                                              f.partition_from != PartitionFrom::kNodes);
  });
}

class RealRun {
 public:
  RealRun(const Scenario& scenario, uint64_t seed, std::string history_dir, RunResult& result)
      : s_(scenario), seed_(seed), history_dir_(std::move(history_dir)), r_(result) {}
  ~RealRun() { Teardown(); }

  Status Setup();
  void Execute();
  void Teardown();
  // Removes the run directory (only when nothing is mounted in it any more).
  void RemoveRunDir();
  const std::string& root() const { return root_; }

 private:
  Status MakeRunDir();
  double NowMs() const { return std::chrono::duration<double, std::milli>(Runtime::Real().Now() - t0_).count(); }
  // Sleeps until `at` after the start; false when a stop was requested meanwhile.
  bool SleepUntilOffset(Duration at);
  void Fail(const std::string& what) { r_.error += (r_.error.empty() ? "" : "; ") + what; }
  // Checks the workload's history of meta calls into r_.history and writes it out.
  void CheckWorkloadHistory();

  const Scenario& s_;
  const uint64_t seed_;
  const std::string history_dir_;
  RunResult& r_;
  std::string root_;
  std::string socket_dir_;  // a short temp dir when the run dir is too deep for socket paths
  MonoTime t0_{};

  // Declared in start order; Teardown() stops them in the reverse order, explicitly.
  std::unique_ptr<real::RedisController> meta_redis_;  // the meta indexer's
  std::unique_ptr<real::RedisController> redis_;       // coordination (coordination: redis only)
  std::unique_ptr<real::EtcdController> etcd_;         // coordination (coordination: etcd only)
  std::unique_ptr<real::SentinelController> sentinel_;  // coordination (coordination: redis-sentinel only)
  // proxies_[i]: node i's links to coordination (the Redis, each etcd member, or each server and
  // sentinel of a redis-sentinel group).
  std::vector<std::vector<std::unique_ptr<real::LinkProxy>>> proxies_;
  std::vector<std::unique_ptr<FaultfsMount>> mounts_;
  std::vector<std::string> access_paths_;
  std::unique_ptr<real::NodeClocks> clocks_;  // clock faults only: the nodes' own clocks (fake_clock.h)
  std::unique_ptr<NodeCluster> cluster_;
  std::unique_ptr<real::Workload> workload_;
  std::unique_ptr<real::Observer> observer_;
  std::unique_ptr<real::LeaseWatcher> lease_watcher_;  // the lock's lease in the backend itself
  std::unique_ptr<real::FaultApplier> faults_;
  bool torn_down_ = false;
};

Status RealRun::MakeRunDir() {
  const RealModeOptions options = Options();
  std::error_code ec;
  if (!options.out_dir.empty()) {
    root_ = fs::absolute(fs::path(options.out_dir) / "real" / (s_.name + "-" + std::to_string(seed_))).string();
    if (fs::exists(root_)) {
      for (const auto& entry : fs::directory_iterator(root_ + "/mnt", ec)) {
        if (real::IsMountPoint(entry.path().string())) {
          return Status::Unavailable("run dir " + root_ + " still has a mount at " + entry.path().string() +
                                     " (a run of this scenario and seed is in progress?)");
        }
      }
      fs::remove_all(root_, ec);
    }
    fs::create_directories(root_, ec);
    if (ec) return Status::IoError("run dir " + root_ + ": " + ec.message(), ec.value());
  } else {
    std::string templ = (fs::temp_directory_path() / "kvchaos-real-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) return Status::IoError("mkdtemp " + templ, errno);
    root_ = templ;
  }
  // sockaddr_un holds 108 bytes: a deep --out gets its sockets in a short temp dir.
  socket_dir_ = root_;
  if (root_.size() + 32 > 100) {
    std::string templ = "/tmp/kvchaos-ctl-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) return Status::IoError("mkdtemp " + templ, errno);
    socket_dir_ = templ;
  }
  for (const char* sub : {"nodes", "store", "mnt", "paths", "faultfs"}) fs::create_directories(root_ + "/" + sub, ec);
  if (ec) return Status::IoError("run dir " + root_ + ": " + ec.message(), ec.value());
  return Status::Ok();
}

Status RealRun::Setup() {
  if (Status s = MakeRunDir(); !s.ok()) return s;
  const RealModeOptions options = Options();

  // 1. redis-servers: the meta indexer's, and the coordination backend's when the scenario
  //    coordinates through Redis. They are separate servers, as in sim mode, where the fenced
  //    indexer is a durable service of its own: a coordination outage (even one that restarts
  //    Redis empty, losing locks and fencing counters) leaves the index and its newest fencing
  //    token alone, so the fence can do its job.
  const std::string redis_binary = real::FindRedisServer();
  Result<int> meta_port = real::PickFreeLoopbackPort();
  if (!meta_port.ok()) return meta_port.status();
  meta_redis_ = std::make_unique<real::RedisController>(redis_binary, root_ + "/redis-meta", *meta_port);
  if (Status st = meta_redis_->Start(kStartTimeout); !st.ok()) return st;
  if (s_.topology.coordination == CoordinationKind::kRedis) {
    Result<int> port = real::PickFreeLoopbackPort();
    if (!port.ok()) return port.status();
    if (*port == *meta_port) port = real::PickFreeLoopbackPort();
    if (!port.ok()) return port.status();
    redis_ = std::make_unique<real::RedisController>(redis_binary, root_ + "/redis", *port);
    if (Status st = redis_->Start(kStartTimeout); !st.ok()) return st;
  } else if (s_.topology.coordination == CoordinationKind::kRedisSentinel) {
    sentinel_ = std::make_unique<real::SentinelController>(redis_binary, root_ + "/sentinel");
    if (Status st = sentinel_->Start(kStartTimeout); !st.ok()) return st;
  } else if (s_.topology.coordination == CoordinationKind::kEtcd) {
    etcd_ = std::make_unique<real::EtcdController>(real::FindEtcd(), root_ + "/etcd", kEtcdMembers);
    if (Status st = etcd_->Start(kStartTimeout); !st.ok()) return st;
  }
  const int64_t lease_ms = ToMillis(s_.topology.lease);
  // The nodes run with the settings users run: the scenario's, else the production defaults (the
  // elector bounds its renewals by the lease whatever the client's timeout and retries).
  const ElectorSettings elector = ElectorSettingsOf(s_.topology);
  const std::string coordination_query = CoordinationUriQuery(elector);

  // 2. Store backends: every backend is an access path to one shared data directory (as the
  //    store expects: "paths that reach the same data"), through faultfs when the scenario says so.
  const std::string data = root_ + "/store";
  for (const StoreBackend& b : s_.topology.backends) {
    if (b.faultfs) {
      Result<std::string> binary = real::FindFaultfs(options.faultfs);
      if (!binary.ok()) return binary.status();
      real::FaultfsMountSpec spec;
      spec.name = b.name;
      spec.binary = *binary;
      spec.source = data;
      spec.mountpoint = root_ + "/mnt/" + b.name;
      spec.control = socket_dir_ + "/ffs-" + b.name + ".sock";
      spec.fault_log = root_ + "/faultfs/" + b.name + ".faults.jsonl";
      spec.log_path = root_ + "/faultfs/" + b.name + ".log";
      spec.seed = Rng(seed_).Split("faultfs").Split(b.name).seed();
      mounts_.push_back(std::make_unique<FaultfsMount>(spec));
      if (Status st = mounts_.back()->Mount(kStartTimeout); !st.ok()) return st;
      access_paths_.push_back(spec.mountpoint);
    } else {
      // A symlink gives the same directory a path of its own (the store keys backends by path).
      const std::string link = root_ + "/paths/" + b.name;
      std::error_code ec;
      fs::create_directory_symlink(data, link, ec);
      if (ec) return Status::IoError("symlink " + link + ": " + ec.message(), ec.value());
      access_paths_.push_back(link);
    }
  }

  // Store crashes drop what was not made durable since now, before any store I/O.
  if (Status st = real::TrackUnsyncedWrites(s_, mounts_); !st.ok()) return st;

  // 3. The nodes.
  real::NodeClusterSpec spec;
  std::error_code ec;
  spec.kvchaos_binary = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) return Status::IoError("cannot read /proc/self/exe: " + ec.message(), ec.value());
  spec.dir = root_ + "/nodes";
  spec.nodes = s_.topology.nodes;
  spec.lease_ms = lease_ms;
  spec.loop_interval_ms = ToMillis(s_.topology.loop_interval);
  spec.elector = elector;
  switch (s_.topology.coordination) {
    case CoordinationKind::kRedis:
      spec.coordination_uri = redis_->uri() + coordination_query;
      // Each node reaches coordination through its own proxy, so a partition can cut just it.
      for (int i = 0; i < s_.topology.nodes; ++i) {
        auto& links = proxies_.emplace_back();
        links.push_back(std::make_unique<real::LinkProxy>(NodeCluster::NodeId(i), redis_->port()));
        if (Status st = links.back()->Start(); !st.ok()) return st;
        spec.node_coordination_uris.push_back("redis://127.0.0.1:" + std::to_string(links.back()->port()) +
                                              coordination_query);
      }
      break;
    case CoordinationKind::kEtcd: {
      // Every node lists the members in the same order (the gateway fails over along it), each
      // through a proxy of its own, so a partition can cut one node off from all of them.
      const std::string query = coordination_query + "&prefix=kvchaos/";
      spec.coordination_uri = etcd_->uri() + query;
      for (int i = 0; i < s_.topology.nodes; ++i) {
        auto& links = proxies_.emplace_back();
        std::string uri = "etcd://";
        for (int m = 0; m < etcd_->size(); ++m) {
          links.push_back(std::make_unique<real::LinkProxy>(NodeCluster::NodeId(i) + "-etcd" + std::to_string(m),
                                                            etcd_->client_port(m)));
          if (Status st = links.back()->Start(); !st.ok()) return st;
          uri += (m > 0 ? "," : "") + std::string("127.0.0.1:") + std::to_string(links.back()->port());
        }
        spec.node_coordination_uris.push_back(uri + query);
      }
      break;
    }
    case CoordinationKind::kRedisSentinel:
      // The path names the primary; the query follows it.
      spec.coordination_uri = sentinel_->uri() + coordination_query.substr(1);
      if (CutsSentinelLinks(s_)) {
        // The sentinels tell every node the same primary address, so a proxy in front of a server
        // would cut all nodes at once. Each node gets a proxy of its own in front of each server
        // and sentinel, and the connect preload sends its connections there: its configuration
        // stays the one a user writes, and a partition cuts that node alone.
        Result<std::string> preload = real::FindConnectPreload();
        if (!preload.ok()) return preload.status();
        spec.connect_preload = *preload;
        for (int i = 0; i < s_.topology.nodes; ++i) {
          auto& links = proxies_.emplace_back();
          auto& redirects = spec.node_connect_redirects.emplace_back();
          for (int port : sentinel_->ClientPorts()) {
            links.push_back(std::make_unique<real::LinkProxy>(NodeCluster::NodeId(i) + "-r" + std::to_string(links.size()), port));
            if (Status st = links.back()->Start(); !st.ok()) return st;
            redirects.push_back(real::ConnectRedirect{port, links.back()->port()});
          }
        }
      }
      break;
    case CoordinationKind::kFile:
      fs::create_directories(root_ + "/coordination", ec);
      spec.coordination_uri = "file://" + root_ + "/coordination";
      break;
    case CoordinationKind::kMemory:
      spec.coordination_uri = "";
      break;
    case CoordinationKind::kSimRedis:
      return Status::InvalidConfig(s_.file + ": topology.coordination: sim-redis exists only in mode sim");
  }
  spec.indexer_uri = meta_redis_->uri();  // the indexer client's defaults, as in a node config without them
  // The clients' links to the nodes get proxies only when a fault acts on them.
  spec.client_proxies = std::any_of(s_.faults.begin(), s_.faults.end(), [](const FaultEvent& f) {
    return (f.action == FaultAction::kPartition || f.action == FaultAction::kNetwork) &&
           f.partition_from != PartitionFrom::kCoordination;
  });
  if (HasClockFaults(s_)) {
    Result<std::string> preload = real::FindClockPreload();
    if (!preload.ok()) return preload.status();
    clocks_ = std::make_unique<real::NodeClocks>(*preload, spec.dir, s_.topology.nodes);
    spec.clocks = clocks_.get();
  }
  cluster_ = std::make_unique<NodeCluster>(spec);
  if (Status st = cluster_->Start(kStartTimeout); !st.ok()) return st;

  // 4. The workload client (registers the storage once a leader serves), then the observer.
  if (!access_paths_.empty()) {
    workload_ = std::make_unique<real::Workload>(s_, seed_, access_paths_, cluster_->ClientAdminEndpoints());
    if (Status st = workload_->Setup(kStartTimeout); !st.ok()) return st;
  }
  t0_ = Runtime::Real().Now();
  observer_ = std::make_unique<real::Observer>(*cluster_, real::kStorageName, t0_);
  observer_->Start();
  if (!spec.coordination_uri.empty()) {
    Result<std::unique_ptr<election::CoordinationBackend>> backend =
        election::CreateCoordinationBackend(spec.coordination_uri, Runtime::Real());
    if (!backend.ok()) return backend.status();
    lease_watcher_ = std::make_unique<real::LeaseWatcher>(std::move(*backend), *cluster_, t0_);
    lease_watcher_->Start();
  }
  if (workload_) workload_->Start();
  faults_ = std::make_unique<real::FaultApplier>(
      s_, seed_, real::FaultTargets{cluster_.get(), redis_.get(), etcd_.get(), sentinel_.get(), &proxies_, &mounts_,
                                    observer_.get(), workload_.get(), clocks_.get(), meta_redis_->uri()},
      t0_,
      kStartTimeout, r_);
  return Status::Ok();
}

bool RealRun::SleepUntilOffset(Duration at) {
  Runtime& rt = Runtime::Real();
  while (!g_stop) {
    const MonoTime now = rt.Now();
    if (now >= t0_ + at) return true;
    rt.SleepUntil(std::min(t0_ + at, now + std::chrono::milliseconds(50)));
  }
  return false;
}

void RealRun::Execute() {
  Result<std::vector<TimelineStep>> steps = ExpandTimeline(s_);
  if (!steps.ok()) {
    Fail(steps.status().message());
    return;
  }
  for (size_t i = 0; i < steps->size(); ++i) {
    const TimelineStep& step = (*steps)[i];
    if (!SleepUntilOffset(step.at)) break;
    if (step.ends) {
      faults_->End(step);
    } else {
      faults_->Start(i, step);
    }
  }
  SleepUntilOffset(s_.duration);
  const double healed_ms = NowMs();
  faults_->HealAll();
  if (g_stop) {
    Fail("interrupted by a signal: the run was stopped and torn down");
    return;
  }

  // Liveness: a leader serves again once every fault is over.
  const int64_t bound_ms =
      s_.expect.leader_within_ms.value_or(std::max<int64_t>(10000, 3 * ToMillis(s_.topology.lease)));
  Observed observed;
  observed.store = workload_ != nullptr &&
                   (s_.workload.save_rate_per_s > 0 || s_.workload.load_rate_per_s > 0);
  std::optional<double> serving;
  Runtime& rt = Runtime::Real();
  while (!g_stop && NowMs() - healed_ms < static_cast<double>(bound_ms) + 500) {
    serving = observer_->FirstServingSince(healed_ms);
    if (serving) break;
    rt.SleepFor(std::chrono::milliseconds(20));
  }
  if (s_.expect.leader_within_ms) {
    observed.liveness_checked = true;
    observed.leader_after_each_fault = true;
    if (!serving || *serving - healed_ms > static_cast<double>(bound_ms)) {
      observed.liveness_problem = "liveness: no node accepted writes within " + std::to_string(bound_ms) +
                                  " ms after the faults ended";
    }
  }

  // The workload stops, then every acknowledged block is read back.
  if (workload_) {
    workload_->Stop();
    if (!g_stop) workload_->VerifyAll();
  }
  observer_->Stop();
  if (lease_watcher_) lease_watcher_->Stop();
  for (const std::string& exit : cluster_->UnexpectedExits()) Fail("unexpected exit: " + exit);
  if (g_stop) Fail("interrupted by a signal: the run was stopped and torn down");

  // Results.
  RunCounters& c = r_.counters;
  int64_t windows = 0;
  double overlap_ms = 0;
  const std::vector<real::ActingSpan> acting = observer_->ActingSpans();
  r_.failovers = real::BuildFailovers(acting, observer_->Acquisitions(), faults_->marks(),
                                      real::RealFailoverCheckOptions(s_.topology), &windows, &overlap_ms);
  for (const LeadershipSpan& span : observer_->BeliefSpans()) r_.leadership.push_back(span);
  for (const real::ActingSpan& span : acting) r_.leadership.push_back(LeadershipSpan{span.node, span.start_ms, span.end_ms, true});
  c.failovers = static_cast<int64_t>(r_.failovers.size());
  c.reelections = CountReelections(r_.failovers);
  for (const FailoverEvent& e : r_.failovers) c.unnecessary_failovers += e.unnecessary ? 1 : 0;
  c.stale_writes_accepted = observer_->stale_accepted();
  c.stale_writes_rejected = observer_->stale_rejected();
  c.token_regressions = observer_->token_regressions();
  c.dual_acting_windows = windows;
  c.dual_acting_ms = overlap_ms;
  if (lease_watcher_ && lease_watcher_->answers() > 0) {
    observed.lease_ends = true;
    const sim::LeaseStops stops = real::CheckRealLeaseStops(acting, lease_watcher_->LeaseEnds(), s_.topology);
    c.lease_terms_checked = static_cast<int64_t>(stops.terms_checked);
    c.lease_overruns = static_cast<int64_t>(stops.overruns);
    c.lease_overrun_max_ms = static_cast<double>(stops.max_overrun_ns) / 1e6;
  }
  real::WorkloadCounts w;
  if (workload_) w = workload_->Counts();
  c.saves = w.saves;
  c.loads = w.loads;
  c.corrupt_reads_detected = w.corrupt_detected;
  c.corrupt_reads_returned = w.corrupt_returned;
  c.misrouted_reads_reported = w.misrouted_reported;
  c.acked_blocks = w.acked_blocks;
  c.acked_blocks_unreadable = w.acked_unreadable;
  if (workload_) r_.data_plane = DataPlane{w.errors, w.health_transitions, w.saves_cut_by_power_loss};
  // The workload's errors by code go to stale_writes_rejected only for fencing answers; the
  // rest are in the run directory's summary.
  if (auto it = w.errors.find("StaleFencingToken"); it != w.errors.end()) c.stale_writes_rejected += it->second;
  // No event trace in real mode (trace_events stays 0); the observer's poll count is in summary.json.

  nlohmann::json summary = {{"scenario", s_.name},         {"seed", seed_},
                            {"errors_by_code", w.errors},  {"unreadable_examples", w.unreadable_examples},
                            {"observer_polls", observer_->polls()}, {"acting_spans", acting.size()}};
  // How many faults each faultfs mount really injected: a store fault that never hit is worth
  // knowing about when a run passes too easily.
  for (auto& m : mounts_) {
    Result<nlohmann::json> stats = m->Control({{"cmd", "stats"}});
    if (stats.ok()) summary["faultfs"][m->name()] = {{"faults", stats->value("faults", 0)}};
  }
  std::ofstream(root_ + "/summary.json") << DumpJson(summary, 2) << "\n";

  if (workload_ && !g_stop) CheckWorkloadHistory();
  EvaluateExpectations(s_.expect, observed, r_);
  if (!w.unreadable_examples.empty()) {
    for (InvariantVerdict& v : r_.verdicts) {
      if (!v.passed && (v.name == "acked_blocks_readable" || v.name == "no_corrupt_reads")) {
        v.detail += " (e.g. " + w.unreadable_examples[0] + ")";
      }
    }
  }
}

void RealRun::CheckWorkloadHistory() {
  const std::vector<sim::HistoryRecord> records = workload_->History();
  // Into the run directory (kept with the logs when the run fails), and beside the result under
  // --out, where sim mode writes it.
  std::vector<std::string> paths = {root_ + "/history.jsonl"};
  if (!history_dir_.empty()) paths.push_back((fs::path(history_dir_) / r_.HistoryFileName()).string());
  for (const std::string& path : paths) {
    if (Status s = sim::WriteHistory(records, path); !s.ok()) Fail("history: " + s.ToString());
  }
  r_.history = ToHistoryResult(sim::Summarize(sim::CheckHistory(records)), history_dir_.empty() ? "" : r_.HistoryFileName());
}

void RealRun::Teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  // Hung faultfs calls first: store attempts stuck in them must return before the store goes.
  for (auto& m : mounts_) (void)m->Control({{"cmd", "release"}});
  if (observer_) observer_->Stop();
  if (lease_watcher_) lease_watcher_->Stop();
  if (workload_) {
    workload_->Stop();
    workload_.reset();  // the PosixStore waits for its late attempts here
  }
  observer_.reset();
  lease_watcher_.reset();
  cluster_.reset();  // SIGKILL every node
  proxies_.clear();
  for (auto& m : mounts_) m->Unmount();
  mounts_.clear();
  redis_.reset();
  etcd_.reset();
  sentinel_.reset();
  meta_redis_.reset();
  if (socket_dir_ != root_ && !socket_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(socket_dir_, ec);
  }
}

void RealRun::RemoveRunDir() {
  if (root_.empty()) return;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_ + "/mnt", ec)) {
    if (real::IsMountPoint(entry.path().string())) return;  // never delete through a live mount
  }
  fs::remove_all(root_, ec);
}

}  // namespace

void SetRealModeOptions(RealModeOptions options) {
  std::lock_guard<std::mutex> lock(g_options_mu);
  g_options = std::move(options);
}

void RequestRealModeStop() { g_stop.store(true); }
bool RealModeStopRequested() { return g_stop.load(); }

std::string RealModeMissing(const Scenario& scenario) {
  std::string missing;
  if (real::FindRedisServer().empty()) {
    missing = "redis-server is not installed (Debian package redis-server; looked on PATH, /usr/bin, /usr/local/bin)";
  }
  if (scenario.topology.coordination == CoordinationKind::kEtcd && real::FindEtcd().empty()) {
    missing += (missing.empty() ? "" : "; ") +
               std::string("etcd is not installed (Debian package etcd-server; looked on PATH, /usr/bin, /usr/local/bin)");
  }
  if (NeedsFaultfs(scenario)) {
    const std::string fuse = real::FuseUnavailableReason();
    if (!fuse.empty()) missing += (missing.empty() ? "" : "; ") + fuse;
    Result<std::string> faultfs = real::FindFaultfs(Options().faultfs);
    if (!faultfs.ok()) missing += (missing.empty() ? "" : "; ") + faultfs.status().message();
  }
  if (HasClockFaults(scenario)) {
    Result<std::string> preload = real::FindClockPreload();
    if (!preload.ok()) missing += (missing.empty() ? "" : "; ") + preload.status().message();
  }
  if (CutsSentinelLinks(scenario)) {
    Result<std::string> preload = real::FindConnectPreload();
    if (!preload.ok()) missing += (missing.empty() ? "" : "; ") + preload.status().message();
  }
  return missing;
}

RunResult RunRealScenario(const Scenario& scenario, uint64_t seed, const std::string& history_dir) {
  const MonoTime wall_start = Runtime::Real().Now();
  RunResult r = StartRunResult(scenario, seed, RunMode::kReal);
  auto finish = [&] {
    r.wall_ms = std::chrono::duration<double, std::milli>(Runtime::Real().Now() - wall_start).count();
    return r;
  };
  if (g_stop) {
    r.error = "not started: the runner was interrupted";
    r.interrupted = true;
    return finish();
  }
  if (const std::string missing = RealModeMissing(scenario); !missing.empty()) {
    r.error = "real mode cannot run here: " + missing;
    return finish();
  }

  real::SetStopFlag(&g_stop);
  RealRun run(scenario, seed, history_dir, r);
  try {
    if (Status s = run.Setup(); !s.ok()) {
      r.error = "setup failed: " + s.ToString();
    } else {
      run.Execute();
    }
  } catch (const std::exception& e) {
    r.error += (r.error.empty() ? "" : "; ") + std::string("real run aborted: ") + e.what();
  }
  // A failed run keeps its directory for its logs; an interrupted one leaves nothing in the temp
  // dir behind (under --out it stays, as the user asked for results there).
  const bool interrupted = g_stop.load();
  r.interrupted = interrupted && !r.passed();
  const bool keep_always = std::getenv("KVCHAOS_KEEP_RUN_DIR") != nullptr;
  const bool keep = !run.root().empty() && (keep_always || (!r.passed() && !(interrupted && Options().out_dir.empty())));
  run.Teardown();
  if (keep && !r.passed()) {
    // Name the kept run directory where a reader of the result looks first.
    std::string note = "run dir kept: " + run.root() +
                       "; logs: nodes/node-<i>.log, redis*/redis.log, faultfs/<backend>.log; summary.json";
    if (!r.error.empty()) {
      r.error += " (" + note + ")";
    } else {
      for (InvariantVerdict& v : r.verdicts) {
        if (!v.passed) v.detail += " (" + note + ")";
      }
    }
  } else if (!keep) {
    run.RemoveRunDir();
  }
  return finish();
}

}  // namespace kvchaos::harness
