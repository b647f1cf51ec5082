#include "sim/sim_driver.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace kvchaos::sim {
namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  return buf;
}

}  // namespace

DeterminismReport CompareRuns(const SimConfig& first, const SimConfig& second) {
  DeterminismReport report;
  const SimResult a = RunSimulation(first);
  const SimResult b = RunSimulation(second);
  report.hash_first = a.trace_hash;
  report.hash_second = b.trace_hash;
  if (a.trace_hash == b.trace_hash && a.events == b.events && a.checkpoints == b.checkpoints) return report;
  report.identical = false;
  size_t c = 0;
  while (c < a.checkpoints.size() && c < b.checkpoints.size() && a.checkpoints[c] == b.checkpoints[c]) ++c;
  report.diverging_checkpoint = static_cast<int64_t>(c);
  // Checkpoint c covers events up to (c + 1) * K; the first difference lies in [c * K, (c + 1) * K).
  const uint64_t k = a.checkpoint_every;
  SimConfig first_capture = first, second_capture = second;
  first_capture.trace_sink = nullptr;
  second_capture.trace_sink = nullptr;
  first_capture.capture_begin = second_capture.capture_begin = c * k;
  first_capture.capture_end = second_capture.capture_end = (c + 1) * k;
  const SimResult ra = RunSimulation(first_capture);
  const SimResult rb = RunSimulation(second_capture);
  const size_t n = std::max(ra.captured.size(), rb.captured.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string la = i < ra.captured.size() ? ra.captured[i] : "(end of trace)";
    const std::string lb = i < rb.captured.size() ? rb.captured[i] : "(end of trace)";
    if (la != lb) {
      report.first_line = la;
      report.second_line = lb;
      break;
    }
  }
  return report;
}

void AddDataPlane(SimConfig& c) {
  c.clients = 0;  // the TransferClient is the meta service's client
  c.data.paths = {"p1", "p2", "p3"};
  c.data.durable_commit = true;
  c.data.save_rate_per_s = 20;
  c.data.load_rate_per_s = 20;
  c.data.block_size = 4096;
  c.data.key_space = 1024;
  c.faults |= StoreFaults();
}

SimConfig HuntingGround(SimConfig base, PlantedBug bug) {
  auto with_data_plane = [&](uint32_t variants) {
    AddDataPlane(base);
    base.faults &= ~FaultBit(FaultKind::kStoreCrash);
    base.store_fault_variants = variants;
  };
  switch (bug) {
    case PlantedBug::kRecoverySkipsFence:
      base.faults |= FaultBit(FaultKind::kBackendWipe);
      break;
    case PlantedBug::kLateReadIntoCaller:
      with_data_plane(0b0110);  // hangs and latency: attempts time out and complete late
      break;
    case PlantedBug::kHealthNeverTrips:
      with_data_plane(0b0001);  // EIO
      break;
    case PlantedBug::kSkipVerification:
      with_data_plane(0b1000);  // bit flips on reads
      break;
    case PlantedBug::kAckBeforeIndex:
      with_data_plane(0);  // no store faults: the meta history alone must show it
      break;
    case PlantedBug::kInlineHeaderCheckOff:
      with_data_plane(0b10000);  // misdirected reads
      base.data.inline_header = true;
      break;
    case PlantedBug::kDeposedLeaderReads:
    case PlantedBug::kFollowerCachedReads:
      // No store faults: the meta history alone must show it. The client's reads find their node
      // apart from its writes, so they reach a node that no longer leads (correct nodes refuse).
      with_data_plane(0);
      base.data.sticky_reads = true;
      break;
    default:
      break;
  }
  return base;
}

std::vector<ViolationKind> CatchingViolations(PlantedBug bug) {
  switch (bug) {
    case PlantedBug::kRecoverySkipsFence:
      // Not dual acting: after a wipe an old leader acts out its local lease while a new one takes
      // the free lock, with correct code too; fencing is what keeps the data safe then.
      return {ViolationKind::kStaleWriteAccepted, ViolationKind::kLiveness};
    case PlantedBug::kLateReadIntoCaller:
      return {ViolationKind::kUnexpectedCorruption, ViolationKind::kCorruptReturned};
    case PlantedBug::kHealthNeverTrips:
      return {ViolationKind::kHealthNeverTripped};
    case PlantedBug::kSkipVerification:
      return {ViolationKind::kCorruptReturned};
    case PlantedBug::kAckBeforeIndex:
    case PlantedBug::kDeposedLeaderReads:
    case PlantedBug::kFollowerCachedReads:
      return {ViolationKind::kNotLinearizable, ViolationKind::kHistoryInvariant};
    case PlantedBug::kInlineHeaderCheckOff:
      return {ViolationKind::kMisrouteUnreported, ViolationKind::kCorruptReturned};
    default:
      // Every violation but a token regression (none of these bugs resets a counter).
      return {ViolationKind::kStaleWriteAccepted, ViolationKind::kDualActing, ViolationKind::kLiveness,
              ViolationKind::kCorruptReturned, ViolationKind::kUnexpectedCorruption, ViolationKind::kAckedLost,
              ViolationKind::kHealthNeverTripped, ViolationKind::kDeadlock, ViolationKind::kShutdown,
              ViolationKind::kNotLinearizable, ViolationKind::kHistoryInvariant};
  }
}

BugHunt HuntPlantedBug(SimConfig base, PlantedBug bug, uint64_t first_seed, uint64_t max_seeds) {
  BugHunt hunt;
  hunt.bug = bug;
  base = HuntingGround(base, bug);
  base.bug = bug;
  const std::vector<ViolationKind> catching = CatchingViolations(bug);
  for (uint64_t i = 0; i < max_seeds; ++i) {
    base.seed = first_seed + i;
    const SimResult r = RunSimulation(base);
    ++hunt.seeds_run;
    for (const Violation& v : r.violations) {
      if (std::find(catching.begin(), catching.end(), v.kind) == catching.end()) continue;
      hunt.caught = true;
      hunt.seed = base.seed;
      hunt.violation = v.message;
      break;
    }
    if (hunt.caught) break;
  }
  return hunt;
}

int64_t Percentile(std::vector<int64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(values.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

nlohmann::json ConfigToJson(const SimConfig& c) {
  return {{"seed", c.seed},         {"nodes", c.nodes},
          {"lease_ms", c.lease_ms}, {"loop_ms", c.loop_ms},
          {"duration_ms", c.duration_ms}, {"faults", FaultListString(c.faults)},
          {"bug", PlantedBugName(c.bug)}, {"buggify", c.buggify}};
}

nlohmann::json ViolationsToJson(const std::vector<Violation>& violations) {
  nlohmann::json out = nlohmann::json::array();
  for (const Violation& v : violations) out.push_back({{"kind", ViolationKindName(v.kind)}, {"message", v.message}});
  return out;
}

nlohmann::json ResultToJson(const SimConfig& config, const SimResult& r) {
  nlohmann::json failovers = nlohmann::json::array();
  for (const FailoverEvent& f : r.failovers) {
    failovers.push_back({{"cause", f.cause},
                         {"fault_ms", f.fault_ns < 0 ? -1.0 : static_cast<double>(f.fault_ns) / 1e6},
                         {"from_node", f.from_node + 1},
                         {"to_node", f.to_node + 1},
                         {"old_stopped_ms", static_cast<double>(f.old_stopped_ns) / 1e6},
                         {"lock_acquired_ms", f.lock_acquired_ns < 0 ? -1.0 : static_cast<double>(f.lock_acquired_ns) / 1e6},
                         {"serving_ms", static_cast<double>(f.serving_ns) / 1e6},
                         {"unnecessary", f.unnecessary}});
  }
  nlohmann::json buggify = nlohmann::json::object();
  for (const auto& [site, count] : r.buggify_fired) buggify[site] = count;
  nlohmann::json j = {
      {"seed", r.seed},
      {"config", ConfigToJson(config)},
      {"ok", r.ok()},
      {"violations", ViolationsToJson(r.violations)},
      {"trace_hash", Hex(r.trace_hash)},
      {"events", r.events},
      {"simulated_ms", r.simulated_ns / 1'000'000},
      {"wall_seconds", r.wall_seconds},
      {"faults_injected", r.faults_injected},
      {"writes", {{"acting", r.writes_acting},
                  {"index_writes", r.index.writes},
                  {"accepted", r.index.accepted},
                  {"rejected", r.index.rejected},
                  {"stale_accepted", r.index.stale_accepted},
                  {"stale_rejected", r.index.stale_rejected},
                  {"holder_rejected", r.index.holder_writes_rejected}}},
      {"clients", {{"ops", r.client_ops}, {"errors", r.client_errors}}},
      {"grants", r.grants},
      {"token_regressions", r.token_regressions},
      {"dual_acting", {{"windows", r.dual_acting_windows}, {"ms", static_cast<double>(r.dual_acting_ns) / 1e6}}},
      {"dual_believing", {{"windows", r.dual_believing_windows}, {"ms", static_cast<double>(r.dual_believing_ns) / 1e6}}},
      {"failovers", failovers},
      {"unnecessary_failovers", r.unnecessary_failovers},
      {"quiet_start_ms", r.quiet_start_ns / 1'000'000},
      {"leader_after_quiet_ms", r.leader_after_quiet_ns < 0 ? -1.0 : static_cast<double>(r.leader_after_quiet_ns) / 1e6},
      {"network", {{"sent", r.network.sent}, {"dropped", r.network.dropped}, {"duplicated", r.network.duplicated}}},
      {"buggify_fired", buggify},
  };
  if (r.history.checked) {
    j["history"] = {{"operations", r.history.operations}, {"keys", r.history.keys},
                    {"verdict", r.history.verdict},       {"check_ms", r.history.check_ms},
                    {"first_anomaly", r.history.first_anomaly}};
  }
  if (!r.ok()) j["reproduce"] = ReproCommand(config);
  return j;
}

}  // namespace kvchaos::sim
