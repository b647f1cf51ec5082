// `kvchaos sim`: runs the production node (elector, meta service, clients) in the deterministic
// simulator.
//
//   kvchaos sim --seed 42                       one seed, one summary line
//   kvchaos sim --seeds 1..1000 --json out.json many seeds; the exact command to reproduce any
//                                               seed that breaks an invariant is printed
//   kvchaos sim --seed 42 --check-determinism   reruns the seed, reports the first diverging event
//   kvchaos sim --seed 42 --trace trace.txt     every event, one line each
//   kvchaos sim --self-test                     plants each known bug; each must be caught
//   kvchaos sim --coordination etcd --seeds 1..100   the same chaos over etcd (or redis-sentinel)
//
// A run that checks nothing is refused rather than reported OK: --duration needs a unit (a bare
// number would be milliseconds), and a run in which no seed got a single fault (the duration is
// too short for the lease: the first leader takes a lease, the quiet phase at the end at least
// four) fails with exit 2, unless --faults none asked for that. Failover percentiles over no
// failover print as "none", not 0. On a terminal a progress bar shows seeds done, failures and the
// ETA; into a pipe every line is written as it is printed.
//
// Exit status: 0 all seeds passed, 1 a violation (or a bug the self-test did not catch, or a
// non-deterministic seed), 2 bad arguments or a run that checked nothing.
#if defined(KVCHAOS_SIM_WORLD)  // sim/ built with its world (core/election present)
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "core/common/json_text.h"
#include "core/common/logging.h"
#include "core/common/units.h"
#include "harness/progress.h"
#include "sim/sim_driver.h"
#include "sim/world.h"
#include "tools/kvchaos/command_registry.h"

namespace kvchaos::cli {
namespace {

struct SimArgs {
  uint64_t seed = 1;
  std::string seeds;
  int nodes = 3;
  int64_t lease_ms = 10000;
  int64_t loop_ms = 100;
  std::string duration = "10m";
  std::string faults = "default";
  std::string coordination = "sim-redis";
  std::string bug = "none";
  std::string json_out;
  std::string trace_out;
  bool check_determinism = false;
  bool no_buggify = false;
  bool data = false;
  bool self_test = false;
  uint64_t self_test_seeds = 1000;
  bool quiet = false;
};

[[noreturn]] void BadInput(const std::string& message) {
  std::cerr << "kvchaos sim: " << message << "\n";
  throw CLI::RuntimeError(2);
}

// "A..B" (inclusive) or a single number.
std::pair<uint64_t, uint64_t> ParseSeedRange(const std::string& text) {
  const size_t dots = text.find("..");
  try {
    size_t used = 0;
    if (dots == std::string::npos) {
      const uint64_t v = std::stoull(text, &used);
      if (used != text.size()) throw std::invalid_argument("trailing characters");
      return {v, v};
    }
    const std::string a = text.substr(0, dots), b = text.substr(dots + 2);
    const uint64_t lo = std::stoull(a, &used);
    if (used != a.size()) throw std::invalid_argument("trailing characters");
    const uint64_t hi = std::stoull(b, &used);
    if (used != b.size()) throw std::invalid_argument("trailing characters");
    if (hi < lo) BadInput("--seeds '" + text + "': the end is before the start");
    return {lo, hi};
  } catch (const std::logic_error&) {
    BadInput("--seeds '" + text + "': expected A..B with non-negative integers, e.g. 1..1000");
  }
}

sim::SimConfig BuildConfig(const SimArgs& args) {
  sim::SimConfig c;
  c.seed = args.seed;
  c.nodes = args.nodes;
  c.lease_ms = args.lease_ms;
  c.loop_ms = args.loop_ms;
  if (!args.duration.empty() && std::isdigit(static_cast<unsigned char>(args.duration.back()))) {
    BadInput("--duration '" + args.duration + "': give a unit, e.g. " + args.duration + "s or " + args.duration +
             "m (a bare number would be " + args.duration + " ms of simulated time)");
  }
  Result<Duration> duration = ParseDuration(args.duration);
  if (!duration.ok()) BadInput("--duration: " + duration.status().message());
  c.duration_ms = ToMillis(*duration);
  Result<sim::FaultMask> faults = sim::ParseFaultList(args.faults);
  if (!faults.ok()) BadInput(faults.status().message());
  c.faults = *faults;
  Result<sim::SimCoordination> coordination = sim::ParseSimCoordination(args.coordination);
  if (!coordination.ok()) BadInput(coordination.status().message());
  c.coordination = *coordination;
  if (args.data) sim::AddDataPlane(c);
  Result<sim::PlantedBug> bug = sim::ParsePlantedBug(args.bug);
  if (!bug.ok()) BadInput(bug.status().message());
  // A planted bug runs where it can show (its store faults, a data plane, Redis wipes), so a seed
  // the self-test printed replays with --bug alone.
  if (*bug != sim::PlantedBug::kNone) c = sim::HuntingGround(c, *bug);
  c.bug = *bug;
  c.buggify = !args.no_buggify;
  Status s = sim::ValidateSimConfig(c);
  if (!s.ok()) BadInput(s.message());
  return c;
}

void WriteJson(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  if (!out) BadInput("--json: cannot write '" + path + "'");
  out << DumpJson(j, 2) << "\n";
  if (!out) BadInput("--json: writing '" + path + "' failed");
}

// "p50=120 ms p99=340 ms", or "none" when nothing was measured (a percentile of no sample is not 0).
std::string Percentiles(const std::vector<int64_t>& sample, const char* what) {
  if (sample.empty()) return std::string(what) + " none";
  return std::string(what) + " p50=" + std::to_string(sim::Percentile(sample, 50)) +
         " ms p99=" + std::to_string(sim::Percentile(sample, 99)) + " ms";
}

nlohmann::json PercentileJson(const std::vector<int64_t>& sample, double p) {
  return sample.empty() ? nlohmann::json(nullptr) : nlohmann::json(sim::Percentile(sample, p));
}

// Over redis-sentinel a failover may promote a replica that lacks the newest lock state: two
// acting leaders and repeated tokens are what that coordination does (counted, reported), and only
// the other violations (a stale write accepted first) fail a seed.
bool Expected(const sim::SimConfig& c, const sim::Violation& v) {
  return c.coordination == sim::SimCoordination::kRedisSentinel &&
         (v.kind == sim::ViolationKind::kDualActing || v.kind == sim::ViolationKind::kTokenRegression);
}

int RunSelfTest(const SimArgs& args, sim::SimConfig base) {
  nlohmann::json hunts = nlohmann::json::array();
  bool all = true;
  const char* coordination = sim::SimCoordinationName(base.coordination);
  for (sim::PlantedBug bug : sim::AllPlantedBugs()) {
    // A bug whose hunting ground the coordination cannot host (etcd keeps its data: no Redis
    // wipes) is skipped, and says why; one that runs and is not caught fails the self-test.
    const Status ground = sim::ValidateSimConfig(sim::HuntingGround(base, bug));
    if (!ground.ok()) {
      std::printf("planted bug %-22s skipped over %s: its hunting ground cannot run there (%s)\n",
                  sim::PlantedBugName(bug), coordination, ground.message().c_str());
      hunts.push_back({{"bug", sim::PlantedBugName(bug)}, {"caught", false}, {"skipped", ground.message()}});
      continue;
    }
    const sim::BugHunt hunt = sim::HuntPlantedBug(base, bug, base.seed, args.self_test_seeds);
    all = all && hunt.caught;
    sim::SimConfig repro = base;
    repro.bug = bug;
    repro.seed = hunt.seed;
    if (hunt.caught) {
      std::printf("planted bug %-22s caught at seed %" PRIu64 " after %" PRIu64 " seed(s): %s\n  reproduce: %s\n",
                  sim::PlantedBugName(bug), hunt.seed, hunt.seeds_run,
                  hunt.violation.substr(0, hunt.violation.find('\n')).c_str(), sim::ReproCommand(repro).c_str());
    } else {
      std::printf("planted bug %-22s NOT caught in %" PRIu64 " seeds over %s\n", sim::PlantedBugName(bug),
                  hunt.seeds_run, coordination);
    }
    hunts.push_back({{"bug", sim::PlantedBugName(bug)},
                     {"caught", hunt.caught},
                     {"seed", hunt.seed},
                     {"seeds_run", hunt.seeds_run},
                     {"violation", hunt.violation}});
  }
  if (!args.json_out.empty()) WriteJson(args.json_out, {{"self_test", hunts}, {"config", sim::ConfigToJson(base)}});
  return all ? 0 : 1;
}

int RunSim(const SimArgs& args) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // into a pipe too, each line as soon as it is printed
  if (std::getenv("KVCHAOS_LOG") == nullptr) spdlog::set_level(spdlog::level::off);  // elector logs at every fault
  sim::SimConfig base = BuildConfig(args);
  if (args.self_test) return RunSelfTest(args, base);
  auto [first, last] = args.seeds.empty() ? std::pair<uint64_t, uint64_t>{args.seed, args.seed} : ParseSeedRange(args.seeds);
  if (!args.trace_out.empty() && first != last) BadInput("--trace needs a single seed (--seed N)");

  nlohmann::json seeds = nlohmann::json::array();
  std::vector<int64_t> failover_ms, crash_acquire_ms, crash_serving_ms;
  uint64_t violations = 0, nondeterministic = 0, faults_injected = 0, expected_seeds = 0;
  const uint64_t runs = last - first + 1;
  // A bar on a terminal for seed ranges; each seed's lines are printed above it.
  std::optional<harness::ProgressReporter> progress;
  if (runs > 1 && harness::StdoutIsTerminal()) {
    const auto start = std::chrono::steady_clock::now();
    progress.emplace(std::cout, runs, true, [start] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
  }
  auto print = [&progress](const std::string& text) {
    if (text.empty()) return;
    if (progress) {
      progress->Print(text);
    } else {
      std::fputs(text.c_str(), stdout);
      std::fflush(stdout);
    }
  };
  for (uint64_t seed = first;; ++seed) {
    sim::SimConfig c = base;
    c.seed = seed;
    std::ofstream trace;
    if (!args.trace_out.empty()) {
      trace.open(args.trace_out);
      if (!trace) BadInput("--trace: cannot write '" + args.trace_out + "'");
      c.trace_sink = [&trace](std::string_view line) { trace << line << '\n'; };
    }
    const sim::SimResult r = sim::RunSimulation(c);
    faults_injected += r.faults_injected;
    std::string text;
    const bool failed_seed = std::any_of(r.violations.begin(), r.violations.end(),
                                         [&c](const sim::Violation& v) { return !Expected(c, v); });
    if (!args.quiet || failed_seed) text += sim::SummaryLine(r) + "\n";
    nlohmann::json j = sim::ResultToJson(c, r);
    for (const sim::Violation& v : r.violations) {
      if (Expected(c, v) && (!args.quiet || failed_seed)) text += "  expected with redis-sentinel: " + v.message + "\n";
    }
    if (!failed_seed && !r.ok()) ++expected_seeds;
    if (failed_seed) {
      ++violations;
      for (const sim::Violation& v : r.violations) {
        if (!Expected(c, v)) text += "  violation: " + v.message + "\n";
      }
      text += "  reproduce: " + sim::ReproCommand(c) + "\n";
    }
    for (const sim::FailoverEvent& f : r.failovers) {
      if (f.fault_ns >= 0) failover_ms.push_back((f.serving_ns - f.fault_ns) / 1'000'000);
      if (f.cause == "crash" && f.fault_ns >= 0) {
        crash_serving_ms.push_back((f.serving_ns - f.fault_ns) / 1'000'000);
        if (f.lock_acquired_ns >= 0) crash_acquire_ms.push_back((f.lock_acquired_ns - f.fault_ns) / 1'000'000);
      }
    }
    bool deterministic = true;
    if (args.check_determinism) {
      sim::SimConfig again = c;
      again.trace_sink = nullptr;
      const sim::DeterminismReport d = sim::CheckDeterminism(again);
      deterministic = d.identical && d.hash_first == r.trace_hash;
      j["deterministic"] = deterministic;
      char line[512];
      if (deterministic) {
        std::snprintf(line, sizeof(line), "  determinism: rerun gave the same trace hash %016" PRIx64 "\n", r.trace_hash);
        text += line;
      } else {
        ++nondeterministic;
        std::snprintf(line, sizeof(line),
                      "  determinism: NOT deterministic (hashes %016" PRIx64 " / %016" PRIx64
                      "), first diverging checkpoint %lld\n",
                      d.hash_first, d.hash_second, static_cast<long long>(d.diverging_checkpoint));
        text += line;
        text += "    first run:  " + d.first_line + "\n    second run: " + d.second_line + "\n";
      }
    }
    print(text);
    if (progress) {
      const bool failed = failed_seed || !deterministic;
      progress->Finished("seed " + std::to_string(seed), failed ? "FAIL" : "PASS", failed,
                         failed ? sim::ReproCommand(c) : std::string());
    }
    seeds.push_back(std::move(j));
    if (seed == last) break;
  }
  if (progress) progress->Done();
  if (expected_seeds > 0) {
    std::printf("%" PRIu64 " seed(s) with dual acting or repeated tokens after a Sentinel failover (expected with "
                "redis-sentinel; no stale write got in)\n", expected_seeds);
  }
  std::printf("%" PRIu64 " seed(s), %" PRIu64 " with violations%s, %" PRIu64 " faults injected; %s; after a leader crash: %s, %s\n",
              runs, violations, args.check_determinism ? (nondeterministic ? ", NOT deterministic" : ", deterministic") : "",
              faults_injected, Percentiles(failover_ms, "failover (fault to new leader serving)").c_str(),
              Percentiles(crash_acquire_ms, "lock acquired").c_str(), Percentiles(crash_serving_ms, "serving").c_str());
  if (!args.json_out.empty()) {
    nlohmann::json summary = {{"runs", runs},
                              {"violations", violations},
                              {"faults_injected", faults_injected},
                              {"failover_ms", {{"count", failover_ms.size()}, {"p50", PercentileJson(failover_ms, 50)},
                                               {"p99", PercentileJson(failover_ms, 99)}}},
                              {"leader_crash", {{"count", crash_serving_ms.size()},
                                                {"lock_acquired_p99_ms", PercentileJson(crash_acquire_ms, 99)},
                                                {"serving_p99_ms", PercentileJson(crash_serving_ms, 99)}}}};
    if (args.check_determinism) summary["nondeterministic"] = nondeterministic;
    WriteJson(args.json_out, {{"summary", summary}, {"seeds", seeds}});
  }
  if (faults_injected == 0 && base.faults != sim::FaultMask{}) {
    std::fprintf(stderr,
                 "kvchaos sim: no fault was injected in %" PRIu64 " seed(s) of %s: nothing was checked under faults. "
                 "With --lease-ms %lld the first leader takes one lease and the quiet phase at the end at least four, "
                 "so faults need --duration well past %llds (default 10m); --faults none runs without them on purpose\n",
                 runs, FormatDuration(Millis(base.duration_ms)).c_str(), static_cast<long long>(base.lease_ms),
                 static_cast<long long>(5 * base.lease_ms / 1000));
    return 2;
  }
  return violations == 0 && nondeterministic == 0 ? 0 : 1;
}

const bool registered = RegisterCommand(
    {"sim", "Deterministic simulator: the production node, store and client under virtual time and faults", [](CLI::App& parent) {
       auto args = std::make_shared<SimArgs>();
       CLI::App* app = parent.add_subcommand("sim", "Deterministic simulator: the production node, store and client under virtual time and faults");
       app->add_option("--seed", args->seed, "Seed of a single run (default 1)");
       app->add_option("--seeds", args->seeds, "Inclusive seed range A..B");
       app->add_option("--nodes", args->nodes, "Number of nodes (default 3)");
       app->add_option("--lease-ms", args->lease_ms, "Lease length in ms (default 10000)");
       app->add_option("--loop-ms", args->loop_ms, "Elector loop interval in ms (default 100)");
       app->add_option("--duration", args->duration, "Simulated time per seed, e.g. 10m, 90s (default 10m)");
       app->add_option("--faults", args->faults,
                       "Comma list of crash,pause,partition,backend-outage,clock,net,slow,backend-wipe,backend-clock,"
                       "store-fault,store-crash; or default, all, none");
       app->add_option("--coordination", args->coordination,
                       "sim-redis (default), redis-sentinel (its failover is drawn too) or etcd (member crashes, "
                       "pauses, a node cut from one member, a member cut from its peers are drawn too)");
       app->add_flag("--data", args->data,
                     "Run the data plane too: the production store and TransferClient over 3 simulated paths, with "
                     "store faults and power losses (durable commits on)");
       app->add_option("--bug", args->bug,
                       "Plant a bug in the product: no-safety-margin, lease-from-response, serve-while-demoting, "
                       "fence-off, recovery-skips-fence, late-read-into-caller, health-never-trips, skip-verification, "
                       "ack-before-index, inline-header-check-off, deposed-leader-reads, follower-cached-reads");
       app->add_option("--json", args->json_out, "Write per-seed results and a summary to this JSON file");
       app->add_option("--trace", args->trace_out, "Write every trace event of the (single) seed to this file");
       app->add_flag("--check-determinism", args->check_determinism, "Rerun each seed and compare trace hashes");
       app->add_flag("--no-buggify", args->no_buggify, "Never take the elector's BUGGIFY paths");
       app->add_flag("--self-test", args->self_test, "Plant each known bug and check that a seed catches it");
       app->add_option("--self-test-seeds", args->self_test_seeds, "Seeds per planted bug in --self-test (default 1000)");
       app->add_flag("--quiet", args->quiet, "Print only seeds with violations and the summary");
       app->callback([args] {
         const int rc = RunSim(*args);
         if (rc != 0) throw CLI::RuntimeError(rc);
       });
     }});

}  // namespace
}  // namespace kvchaos::cli
#endif  // KVCHAOS_SIM_WORLD
