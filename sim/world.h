// The simulated world of one seed: N hosts each running the production node (service::MetaNode:
// LeaderElector, NodeRegistry heartbeats, recovery with fencing, the leader-only data plane)
// behind the production request handling (service::NodeApi), a simulated Redis for coordination
// and the production meta index (LocalMetaIndexer on its own host), all over a simulated network;
// clients that call the leader through the production HttpMetaClient and LeaderDiscovery; an
// observer that probes every node the way real mode's observer does; a fault schedule (chaos
// phase, then quiet phase); and the checkers: stale writes accepted, token regressions,
// dual-acting windows, liveness after the quiet phase starts, failover timings with true-time
// stamps. RunSimulation is a pure function of the config: the same config gives the same trace hash.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/store/store_config.h"
#include "faultfs/rule.h"
#include "sim/data_workload.h"
#include "sim/fault_schedule.h"
#include "sim/linearizability.h"
#include "sim/sim_meta_index.h"
#include "sim/sim_etcd.h"
#include "sim/sim_network.h"
#include "sim/sim_sentinel.h"

namespace kvchaos::sim {

// Bugs the self-test plants in the product (through its testing knobs) to prove the checkers
// catch them.
enum class PlantedBug : uint8_t {
  kNone = 0,
  kNoSafetyMargin,      // elector knob: safety margin 0
  kLeaseFromResponse,   // elector knob: lease measured from the response
  kServeWhileDemoting,  // elector knob: IsLeader() stays true while DEMOTING
  kFenceOff,            // meta index knob: the fence check is skipped
  kRecoverySkipsFence,  // node knob: a new leader serves without fencing its term
  kLateReadIntoCaller,  // store knob: reads go straight to caller buffers, late ones too
  kHealthNeverTrips,    // store knob: failures never count in a path's health window
  kSkipVerification,    // client knob: Load returns blocks without checking their checksums
  kAckBeforeIndex,      // world knob: a node acknowledges every 10th FinishWriteCache at once and
                        // commits it to the index only after its next call (lost if it crashes)
  kInlineHeaderCheckOff,  // client knob: Load never looks at the inline headers it reads
  kDeposedLeaderReads,  // world knob: a node whose term ended keeps answering GetCacheLocation for a
                        // lease from the answers it gave while leading (keys it never read: none)
  kFollowerCachedReads,  // world knob: a node that does not lead answers GetCacheLocation from its
                         // copy of the map (taken from the index, refreshed every 2 s)
};
const char* PlantedBugName(PlantedBug bug);
// "none", "no-safety-margin", "lease-from-response", "serve-while-demoting", "fence-off",
// "recovery-skips-fence", "late-read-into-caller", "health-never-trips", "skip-verification",
// "ack-before-index", "inline-header-check-off", "deposed-leader-reads", "follower-cached-reads".
Result<PlantedBug> ParsePlantedBug(std::string_view text);
std::vector<PlantedBug> AllPlantedBugs();

// The data plane of a world: one client host with the production PosixStore over the simulated
// disk (one storage, a mount /sim/<name> per path) and a TransferClient with checksums through the
// meta service, driven by DataWorkload. Off while `paths` is empty or no rate is set.
struct SimDataPlane {
  std::vector<std::string> paths;
  store::IoEngineKind engine = store::IoEngineKind::kPsync;
  bool durable_commit = false;
  double save_rate_per_s = 0;
  double load_rate_per_s = 0;
  uint64_t block_size = 64 * 1024;
  int64_t key_space = 1024;
  int clients = 1;
  bool inline_header = false;  // the storage writes inline headers (misrouted reads are reported)
  // The client's reads go through a meta client of their own (sim/read_routing_meta_client.h): it
  // keeps reading from the node that last answered a read until that node refuses one.
  bool sticky_reads = false;
  bool on() const { return !paths.empty() && (save_rate_per_s > 0 || load_rate_per_s > 0); }
};

// A faultfs rule a kStoreFault action installs on a mount (a path name, or "all") for its duration.
struct SimStoreRule {
  std::string mount;
  faultfs::Rule rule;
};

// The coordination service of a world: one Redis, a primary with one replica promoted by
// sentinels (sim/sim_sentinel.h; asynchronous replication, a failover on kCoordinationFailover),
// or a 3-member etcd cluster (sim/sim_etcd.h) the nodes reach through the production
// CoordinationEtcdBackend (faults may name one member: FaultAction::member).
enum class SimCoordination : uint8_t { kRedis, kRedisSentinel, kEtcd };
// "sim-redis", "redis-sentinel", "etcd" (the names of `kvchaos sim --coordination`).
const char* SimCoordinationName(SimCoordination kind);
// InvalidArgument names the option and the allowed values.
Result<SimCoordination> ParseSimCoordination(std::string_view text);
inline constexpr int kSimEtcdMembers = 3;

struct SimConfig {
  uint64_t seed = 1;
  int nodes = 3;
  SimCoordination coordination = SimCoordination::kRedis;
  SimSentinelOptions sentinel;  // replication lag and promotion delay (kRedisSentinel)
  SimEtcdOptions etcd;          // election timeout, minimum TTL, lease revocation delay (kEtcd)
  int64_t lease_ms = 10000;
  int64_t loop_ms = 100;
  int64_t duration_ms = 600000;
  FaultMask faults = DefaultFaults();
  // Faults from a scenario, applied in addition to the generated ones (chaos phase only).
  std::vector<FaultAction> explicit_faults;
  SimDataPlane data;
  std::vector<SimStoreRule> store_rules;
  // Generated store faults (kinds store-fault in `faults`): bit v lets variant v be drawn (0 EIO,
  // 1 hang, 2 latency, 3 read bit flips, 4 misdirected reads: opt-in, not in the default 0xf).
  uint32_t store_fault_variants = 0xf;
  PlantedBug bug = PlantedBug::kNone;
  // Share of the run at its end with no faults (at least `liveness_bound_ms` + 2 leases).
  double quiet_fraction = 0.3;
  // When set, the quiet phase starts here instead (scenarios: after their last fault ends, so
  // none is dropped).
  int64_t quiet_start_ms = -1;
  // A leader must serve this long after the quiet phase starts (0: 2 x lease_ms).
  int64_t liveness_bound_ms = 0;
  // The observer probes each node that says it leads this often (every node every 10th time).
  int64_t write_interval_ms = 50;
  // Clients of the meta service; together they start one write (StartWrite, then FinishWrite
  // unless cached) every client_interval_ms.
  int clients = 1;
  int64_t client_interval_ms = 500;
  // The nodes' coordination client: timeout per attempt and extra attempts (the production
  // client's URI defaults are 1000 ms and 2; scenarios run with those unless they set them).
  int64_t backend_timeout_ms = 500;
  int backend_retries = 1;
  // The elector's safety margin (-1: its default) and Demote's cool-down before campaigning again.
  int64_t safety_margin_ms = -1;
  int64_t forbid_campaign_ms = 0;
  // Clocks start within +-max_drift_ppm; "clock" faults move a drift within +-fault_drift_ppm
  // (a misbehaving VM clock; the default margin still covers it over a lease).
  int64_t max_drift_ppm = 100;
  int64_t fault_drift_ppm = 1000;
  bool buggify = true;
  // The data plane's history of meta calls (docs/history.md): checked at the end of the run when
  // set, and written here as JSON lines when `history_path` is not empty.
  bool check_history = true;
  std::string history_path;
  uint64_t checkpoint_every = 4096;
  // Trace text: every line to `trace_sink`, and/or the events numbered [begin, end) kept.
  std::function<void(std::string_view)> trace_sink;
  uint64_t capture_begin = 0;
  uint64_t capture_end = 0;
  // Tests of the determinism checker only: adds one trace event at this true time (-1: never).
  int64_t test_perturb_at_ms = -1;
};

// Rejects configs that cannot run (nodes < 1, lease <= 0, ...), naming the option.
Status ValidateSimConfig(const SimConfig& config);

struct FailoverEvent {
  std::string cause;         // fault kind that hit the old leader, or "none"
  int64_t fault_ns = -1;     // true time of that fault (-1: none)
  int from_node = -1;
  int to_node = -1;
  int64_t old_stopped_ns = 0;    // old leader's last moment of acting
  int64_t lock_acquired_ns = -1; // backend granted the new leader's token
  int64_t serving_ns = 0;        // new leader's first accepted write
  bool unnecessary = false;      // the old leader was healthy
};

// A span in which a node believed it led (acting = false) or accepted writes as leader (true).
struct LeadershipInterval {
  int node = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool acting = false;
};

// What a run got wrong, by kind: callers decide on the kind, never on the message's wording.
enum class ViolationKind : uint8_t {
  kStaleWriteAccepted,  // safety: the meta index took a write older than a presented token
  kTokenRegression,     // a grant not above every earlier grant of the key
  kDualActing,          // two nodes served as leader at the same true time
  kLiveness,            // no leader in time, or the lock holder's own writes refused
  kCorruptReturned,     // the data plane got wrong bytes with an OK load
  kUnexpectedCorruption,  // checksums caught damage no fault of the run can have done
  kAckedLost,           // an acknowledged block did not read back, with no power loss to explain it
  kHealthNeverTripped,  // a path failing most of its calls was never excluded
  kNotLinearizable,     // the data plane's meta history has no linearization (or ran out of budget)
  kHistoryInvariant,    // a lost write, a read going back, or a client missing its own write
  kDataPlane,           // the data plane could not start
  kDeadlock,            // every thread blocked
  kShutdown,            // threads that never finished, or an error shutting down
  kSimulatorError,      // an exception out of the simulation
  kMisrouteUnreported,  // with inline headers, a misdirected read was taken for damage (a checksum
                        // mismatch) instead of being reported as misrouted
};
const char* ViolationKindName(ViolationKind kind);

struct Violation {
  ViolationKind kind = ViolationKind::kSimulatorError;
  std::string message;
  friend bool operator==(const Violation&, const Violation&) = default;
};

struct SimResult {
  uint64_t seed = 0;
  uint64_t trace_hash = 0;
  uint64_t events = 0;
  std::vector<uint64_t> checkpoints;
  uint64_t checkpoint_every = 0;
  std::vector<std::string> captured;
  int64_t simulated_ns = 0;
  double wall_seconds = 0;
  uint64_t context_switches = 0;
  uint64_t faults_injected = 0;
  MetaIndexCounters index;        // fenced writes at the meta index, with the ground truth
  uint64_t writes_acting = 0;     // write calls that passed a node's leader gate
  uint64_t client_ops = 0;        // meta clients' calls (StartWrite + FinishWrite)
  uint64_t client_errors = 0;     // of them, failed
  DataWorkloadCounts data;        // the data plane's Saves and Loads, when on
  uint64_t health_transitions = 0;  // of the store's paths (excluded or readmitted)
  uint64_t store_faults = 0;        // store rules installed and storage power losses
  std::string data_plane_error;   // the data plane could not start (nothing was measured)
  HistorySummary history;         // of the data plane's meta calls, when checked
  uint64_t grants = 0;
  uint64_t token_regressions = 0;
  // Grants while another holder's lease still ran on the server that granted or renewed it (two
  // holders of the lock: expected after a lagging Redis failover, counted, not a violation alone).
  uint64_t duplicate_lock_holders = 0;
  // redis-sentinel: replicas promoted, and writes the promoted replica never received.
  uint64_t coordination_promotions = 0;
  uint64_t replication_writes_lost = 0;
  // etcd: raft leaders elected (the first included), leases that expired, and requests a member
  // held unanswered (it waited for a lost leader) or refused for want of one.
  uint64_t coordination_elections = 0;
  uint64_t coordination_leases_expired = 0;
  uint64_t coordination_unanswered = 0;
  uint64_t coordination_no_leader = 0;
  uint64_t dual_acting_windows = 0;
  int64_t dual_acting_ns = 0;
  uint64_t dual_believing_windows = 0;  // two nodes in LEADER state (merely believing)
  int64_t dual_believing_ns = 0;
  std::vector<FailoverEvent> failovers;
  std::vector<LeadershipInterval> leadership;  // for timelines (kvchaos run results)
  uint64_t unnecessary_failovers = 0;
  // Terms checked against their lease in the backend, those that accepted a write later than its
  // end − loop, and by how much the latest of them did.
  uint64_t lease_terms_checked = 0;
  uint64_t lease_overruns = 0;
  int64_t max_lease_overrun_ns = 0;
  int64_t quiet_start_ns = 0;
  int64_t leader_after_quiet_ns = -1;  // first serving leader after the quiet phase started
  NetworkCounters network;
  std::vector<std::pair<std::string, uint64_t>> buggify_fired;
  std::vector<Violation> violations;
  bool ok() const { return violations.empty(); }
  void Violate(ViolationKind kind, std::string message) { violations.push_back({kind, std::move(message)}); }
};

SimResult RunSimulation(const SimConfig& config);

// The command line that reproduces `config` (for violation reports).
std::string ReproCommand(const SimConfig& config);
// One line per seed: "seed=… hash=… failovers=… … OK" or "… VIOLATION: …".
std::string SummaryLine(const SimResult& result);

}  // namespace kvchaos::sim
