// The result of one run (one scenario × one seed), written as one JSON file per run
// (`<out>/<scenario>-<seed>.json`) and read back by `kvchaos report` and CI tooling. The format is
// documented in harness/RESULTS.md; its tag is "kvchaos-result/1".
//
// Times are true time (the simulator's global clock, or the runner's monotonic clock in real
// mode) in milliseconds from the start of the run, as doubles so sub-millisecond sim timings survive.
// FromJson is strict: a missing or ill-typed field is an error naming the field, never a default,
// except counters, which read as 0 when absent so old results stay readable after new counters.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace kvchaos::harness {

inline constexpr const char* kResultFormat = "kvchaos-result/1";

// One expectation of the scenario and whether the run met it.
struct InvariantVerdict {
  std::string name;    // "no_stale_writes", "failover_p99_ms", …
  bool passed = true;
  std::string detail;  // what was measured: "stale writes accepted: 0", "p99 2310 ms <= 2500 ms"
  friend bool operator==(const InvariantVerdict&, const InvariantVerdict&) = default;
};

// One leadership change, from the fault that caused it to the new leader serving.
struct FailoverEvent {
  std::string fault_class;          // the scenario fault's class ("crash", "leader-pause", …)
  double fault_at_ms = 0;           // when the fault hit
  int old_leader = -1;              // node index; -1 when there was no leader
  int new_leader = -1;
  std::optional<double> old_leader_stopped_ms;  // old leader stopped accepting writes
  std::optional<double> lock_acquired_ms;       // new leader took the lock
  double serving_ms = 0;            // new leader started serving
  bool unnecessary = false;         // the old leader was healthy
  double failover_ms() const { return serving_ms - fault_at_ms; }
  // How long no node accepted writes: the old leader's last accepted write to the new leader's first.
  double unavailable_ms() const { return serving_ms - old_leader_stopped_ms.value_or(fault_at_ms); }
  // The node that lost leadership took it back: no handover to another node.
  bool reelection() const { return old_leader >= 0 && old_leader == new_leader; }
  friend bool operator==(const FailoverEvent&, const FailoverEvent&) = default;
};

// A span in which a node believed it led, and the part in which it also accepted writes.
struct LeadershipSpan {
  int node = 0;
  double start_ms = 0;
  double end_ms = 0;
  bool acting = false;  // true: accepting data-plane writes; false: believes it leads only
  friend bool operator==(const LeadershipSpan&, const LeadershipSpan&) = default;
};

// A fault as applied, for timelines.
struct AppliedFault {
  std::string fault_class;
  std::string target;  // "node 1", "leader (node 0)", "backend p1", "coordination"
  double start_ms = 0;
  std::optional<double> end_ms;
  friend bool operator==(const AppliedFault&, const AppliedFault&) = default;
};

struct RunCounters {
  int64_t saves = 0;
  int64_t loads = 0;
  int64_t failovers = 0;    // every leadership change, re-elections included
  int64_t reelections = 0;  // ... of which the same node led again (FailoverEvent::reelection)
  int64_t unnecessary_failovers = 0;
  int64_t stale_writes_accepted = 0;
  int64_t stale_writes_rejected = 0;
  int64_t dual_acting_windows = 0;
  double dual_acting_ms = 0;
  int64_t token_regressions = 0;
  // Lock grants while another holder's lease still ran on the server that had granted or renewed
  // it (mode sim only: the simulator's ground truth; after a lagging Redis failover).
  int64_t duplicate_lock_holders = 0;
  // Terms whose lease end in the coordination backend was known, those that accepted a write later
  // than that end − loop, and by how much at most (0 when none did).
  int64_t lease_terms_checked = 0;
  int64_t lease_overruns = 0;
  double lease_overrun_max_ms = 0;
  int64_t corrupt_reads_detected = 0;  // checksum mismatches caught and reported as errors
  int64_t corrupt_reads_returned = 0;  // corrupt data returned as good: always a violation
  int64_t misrouted_reads_reported = 0;  // blocks a Load said were another key's (inline headers)
  int64_t acked_blocks = 0;
  int64_t acked_blocks_unreadable = 0;
  int64_t trace_events = 0;
  int64_t ops() const { return saves + loads; }
  friend bool operator==(const RunCounters&, const RunCounters&) = default;
};

// What the data-plane clients of a run saw besides the counters (saves, loads, corrupt reads,
// acknowledged blocks): errors by status code and the store's health transitions. Real mode fills
// it; a run without it measured no data plane (reports show "–", not 0).
struct DataPlane {
  std::map<std::string, int64_t> errors_by_code;  // StatusCodeName -> count, over saves, loads and readback
  int64_t health_transitions = 0;                 // backend availability changes of the clients' store
  int64_t saves_cut_by_power_loss = 0;            // in flight at a storage power loss: no outcome
  friend bool operator==(const DataPlane&, const DataPlane&) = default;
};

// One op of a history anomaly as the report draws it (a sim::HistoryRecord, docs/history.md, cut
// down to what a timeline shows; the harness does not link the simulator).
struct AnomalyOp {
  std::string client;
  std::string op;       // "get_location", "finish_write", ...
  std::string key;
  std::string outcome;  // "ok", "failed", "unknown"
  double invoke_ms = 0;    // on the run's clock
  double complete_ms = 0;  // unknown outcome: when the client gave up
  std::string value;    // what it wrote or read, as text ("crc=0x1f…", "none", "session ws-7-3", "v2")
  std::string node;     // who served it ("" when unknown)
  int64_t term = -1;    // the term it was served under (-1 when unknown)
  friend bool operator==(const AnomalyOp&, const AnomalyOp&) = default;
};

// The check of the run's history of meta calls (docs/history.md): how much was checked, the
// verdict, and the first anomaly with its smallest failing sub-history. Absent: not checked.
struct HistoryResult {
  int64_t operations = 0;
  int64_t keys = 0;
  std::string verdict;  // "linearizable", "not linearizable", "unknown (budget)"
  int64_t keys_not_linearizable = 0;
  int64_t keys_unknown_budget = 0;
  int64_t lost_writes = 0;          // findings of each cheap invariant
  int64_t non_monotonic_reads = 0;
  int64_t read_your_writes = 0;
  double check_ms = 0;              // wall time of the check (not deterministic)
  std::string first_anomaly;        // "" when none
  std::string anomaly_key;          // the first non-linearizable key ("" when none)
  std::vector<std::string> anomaly; // its smallest failing ops, one line each (times, client, term)
  std::vector<AnomalyOp> anomaly_ops;  // the same ops, for the report's timeline chart
  std::string file;                 // the history's file name beside the result ("" when not written)
  friend bool operator==(const HistoryResult&, const HistoryResult&) = default;
};

// How many of `failovers` are re-elections of the node that had led.
int64_t CountReelections(const std::vector<FailoverEvent>& failovers);

struct RunResult {
  std::string scenario_name;
  std::string scenario_file;
  std::string scenario_hash;
  std::string mode;        // "sim" | "real"
  bool both_modes = false; // the scenario file is `mode: both`: its runs name their mode
  uint64_t seed = 0;
  std::string build_id;    // kvchaos::kBuildId of the binary that ran it
  std::string version;
  std::string trace_hash;  // 16 hex digits; empty in real mode (no deterministic trace)
  double duration_ms = 0;  // true time covered by the run
  double wall_ms = 0;      // how long the run took on the machine (not deterministic)
  int nodes = 0;
  // The coordination the run's nodes used (CoordinationKindName: "sim-redis", "redis", "etcd",
  // "redis-sentinel", …); empty in results written before it was recorded.
  std::string coordination;
  std::optional<int64_t> failover_bound_ms;  // the scenario's expect.failover_p99_ms
  std::map<std::string, int64_t> class_failover_bounds_ms;  // its expect.classes.<class>.failover_p99_ms
  std::string error;       // set when the run could not complete (setup failed, …)
  // The runner was interrupted (SIGINT/SIGTERM) and stopped this run: it did not pass, but it
  // did not fail either, and has nothing to reproduce.
  bool interrupted = false;
  // How to start the run again, for ReproCommand: the kvchaos command as the user can type it
  // from where they ran it, and the flags of `kvchaos run` that change the run (`--faultfs PATH`).
  // The runner sets them.
  std::string program = "kvchaos";
  std::vector<std::string> run_flags;
  std::vector<InvariantVerdict> verdicts;
  std::vector<FailoverEvent> failovers;
  std::vector<LeadershipSpan> leadership;
  std::vector<AppliedFault> faults;
  RunCounters counters;
  std::optional<DataPlane> data_plane;
  std::optional<HistoryResult> history;

  // A run passes when it completed and met every expectation.
  bool passed() const;
  // `PROGRAM run FILE --seed N [--mode M] [RUN_FLAGS]`, shell-quoted: the one line that
  // reproduces this run (a real run says so, as it needs redis-server and FUSE; so does a sim run
  // of a file for both modes).
  std::string ReproCommand() const;
  // "<name>-<seed>.json" ("<name>-<mode>-<seed>.json" for a file of both modes): the file name a
  // runner writes this result under.
  std::string FileName() const;
  // FileName() with ".history.jsonl" for ".json": where the run's history goes beside it.
  std::string HistoryFileName() const;
  friend bool operator==(const RunResult&, const RunResult&) = default;
};

nlohmann::json ToJson(const RunResult& result);
// `origin` names the source in messages ("results/x-7.json").
Result<RunResult> RunResultFromJson(const nlohmann::json& j, const std::string& origin);
Status WriteRunResult(const RunResult& result, const std::string& path);
Result<RunResult> ReadRunResult(const std::string& path);

// Quotes `text` for a POSIX shell when it holds anything beyond [A-Za-z0-9_./:=+-].
std::string ShellQuote(const std::string& text);

}  // namespace kvchaos::harness
