// The simulated world of one seed: N nodes, each running the production LeaderElector against a
// simulated Redis over a simulated network, a data-plane writer per node that writes to the
// fenced resource whenever its elector says it leads, a fault schedule (chaos phase, then quiet
// phase), and the checkers: stale writes accepted, token regressions, dual-acting windows,
// liveness after the quiet phase starts, failover timings with true-time stamps.
// RunSimulation is a pure function of the config: the same config gives the same trace hash.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "sim/fault_schedule.h"
#include "sim/fenced_resource.h"
#include "sim/sim_network.h"

namespace kvchaos::sim {

// Bugs the self-test plants (in the simulation only) to prove the checkers catch them.
enum class PlantedBug : uint8_t {
  kNone = 0,
  kNoSafetyMargin,      // elector knob: safety margin 0
  kLeaseFromResponse,   // elector knob: lease measured from the response
  kServeWhileDemoting,  // elector knob: IsLeader() stays true while DEMOTING
  kFenceOff,            // the fenced resource does not check tokens
};
const char* PlantedBugName(PlantedBug bug);
// "none", "no-safety-margin", "lease-from-response", "serve-while-demoting", "fence-off".
Result<PlantedBug> ParsePlantedBug(std::string_view text);
std::vector<PlantedBug> AllPlantedBugs();

struct SimConfig {
  uint64_t seed = 1;
  int nodes = 3;
  int64_t lease_ms = 10000;
  int64_t loop_ms = 100;
  int64_t duration_ms = 600000;
  FaultMask faults = DefaultFaults();
  // Faults from a scenario, applied in addition to the generated ones (chaos phase only).
  std::vector<FaultAction> explicit_faults;
  PlantedBug bug = PlantedBug::kNone;
  // Share of the run at its end with no faults (at least `liveness_bound_ms` + 2 leases).
  double quiet_fraction = 0.3;
  // A leader must serve this long after the quiet phase starts (0: 2 x lease_ms).
  int64_t liveness_bound_ms = 0;
  int64_t write_interval_ms = 50;
  int64_t drain_max_ms = 1000;  // OnNoLongerLeader waits up to this long for in-flight requests
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
  FencedResourceCounters resource;
  uint64_t local_writes_accepted = 0;  // by nodes that believed they lead (IsLeader() true)
  uint64_t grants = 0;
  uint64_t token_regressions = 0;
  // Fence refusals of the lock holder's current token (a leader that cannot write): a violation.
  uint64_t holder_writes_rejected = 0;
  uint64_t dual_acting_windows = 0;
  int64_t dual_acting_ns = 0;
  uint64_t dual_believing_windows = 0;  // two nodes in LEADER state (merely believing)
  int64_t dual_believing_ns = 0;
  std::vector<FailoverEvent> failovers;
  std::vector<LeadershipInterval> leadership;  // for timelines (kvchaos run results)
  uint64_t unnecessary_failovers = 0;
  int64_t quiet_start_ns = 0;
  int64_t leader_after_quiet_ns = -1;  // first serving leader after the quiet phase started
  NetworkCounters network;
  std::vector<std::pair<std::string, uint64_t>> buggify_fired;
  std::vector<std::string> violations;
  bool ok() const { return violations.empty(); }
};

SimResult RunSimulation(const SimConfig& config);

// The command line that reproduces `config` (for violation reports).
std::string ReproCommand(const SimConfig& config);
// One line per seed: "seed=… hash=… failovers=… … OK" or "… VIOLATION: …".
std::string SummaryLine(const SimResult& result);

}  // namespace kvchaos::sim
