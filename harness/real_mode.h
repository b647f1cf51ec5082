// Real mode of `kvchaos run`: a `mode: real` scenario runs against real processes on this machine,
// loopback only — redis-servers (one for the meta index, one for coordination when the scenario
// says `coordination: redis`; separate, so a coordination outage leaves the fenced index alone, as
// in sim mode), N `kvchaos node` processes,
// one faultfs mount per backend marked `faultfs: true`, and a workload client inside the runner
// (TransferClient + HTTP meta client with leader discovery). The timeline is applied in true time
// with signals, proxy cuts and Redis restarts, admin calls and faultfs control requests; an observer
// thread records leadership; the result is judged by the same rules as sim mode
// (runner_expectations.h).
//
// Every run has a run directory (under --out when given: <out>/real/<scenario>-<seed>/, else a
// temp dir) holding the node configs, the logs of every child, the shared store data and the
// mount points. Teardown always happens — success, failure, exception, or a stop requested by a
// signal (RequestRealModeStop) — and children carry PR_SET_PDEATHSIG, so they die with the
// runner even when it is SIGKILLed. The run directory is removed after a passing run and kept
// (and named in the result) after a failing one.
//
// The pieces live in harness/real/: child_process (supervisor), redis_controller, node_cluster,
// faultfs_mount, workload, observer.
#pragma once

#include <cstdint>
#include <string>

#include "harness/run_result.h"
#include "harness/scenario.h"

namespace kvchaos::harness {

struct RealModeOptions {
  std::string faultfs;  // --faultfs PATH; empty: KVCHAOS_FAULTFS, then next to kvchaos
  std::string out_dir;  // --out; empty: run directories go to a temp dir
};
// Set once by `kvchaos run` before any run starts.
void SetRealModeOptions(RealModeOptions options);

// Asks every real run in progress to stop now (tear down and end with an "interrupted" error) and
// every later one not to start. Async-signal-safe: a SIGINT/SIGTERM handler may call it.
void RequestRealModeStop();
bool RealModeStopRequested();

// What this machine lacks for real runs of `scenario` ("" when nothing): redis-server, FUSE
// (/dev/fuse, fusermount3) and the faultfs binary when a backend sits on faultfs.
std::string RealModeMissing(const Scenario& scenario);

// Runs one seed. Never throws: setup failures give a result with `error` naming what failed and
// the log to read. The workload's history of meta calls is checked (result.history) and written to
// the run directory as history.jsonl, and to `history_dir` as RunResult::HistoryFileName() when set.
RunResult RunRealScenario(const Scenario& scenario, uint64_t seed, const std::string& history_dir = "");

}  // namespace kvchaos::harness
