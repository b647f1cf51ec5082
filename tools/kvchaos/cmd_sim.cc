// `kvchaos sim`: runs the production LeaderElector in the deterministic simulator.
//
//   kvchaos sim --seed 42                       one seed, one summary line
//   kvchaos sim --seeds 1..1000 --json out.json many seeds; the exact command to reproduce any
//                                               seed that breaks an invariant is printed
//   kvchaos sim --seed 42 --check-determinism   reruns the seed, reports the first diverging event
//   kvchaos sim --seed 42 --trace trace.txt     every event, one line each
//   kvchaos sim --self-test                     plants each known bug; each must be caught
//
// Exit status: 0 all seeds passed, 1 a violation (or a bug the self-test did not catch, or a
// non-deterministic seed), 2 bad arguments.
#if defined(KVCHAOS_SIM_WORLD)  // sim/ built with its world (core/election present)
#include <spdlog/spdlog.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "core/common/json_text.h"
#include "core/common/logging.h"
#include "core/common/units.h"
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
  Result<Duration> duration = ParseDuration(args.duration);
  if (!duration.ok()) BadInput("--duration: " + duration.status().message());
  c.duration_ms = ToMillis(*duration);
  Result<sim::FaultMask> faults = sim::ParseFaultList(args.faults);
  if (!faults.ok()) BadInput(faults.status().message());
  c.faults = *faults;
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

int RunSelfTest(const SimArgs& args, sim::SimConfig base) {
  nlohmann::json hunts = nlohmann::json::array();
  bool all = true;
  for (sim::PlantedBug bug : sim::AllPlantedBugs()) {
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
      std::printf("planted bug %-22s NOT caught in %" PRIu64 " seeds\n", sim::PlantedBugName(bug), hunt.seeds_run);
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
  if (std::getenv("KVCHAOS_LOG") == nullptr) spdlog::set_level(spdlog::level::off);  // elector logs at every fault
  sim::SimConfig base = BuildConfig(args);
  if (args.self_test) return RunSelfTest(args, base);
  auto [first, last] = args.seeds.empty() ? std::pair<uint64_t, uint64_t>{args.seed, args.seed} : ParseSeedRange(args.seeds);
  if (!args.trace_out.empty() && first != last) BadInput("--trace needs a single seed (--seed N)");

  nlohmann::json seeds = nlohmann::json::array();
  std::vector<int64_t> failover_ms, crash_acquire_ms, crash_serving_ms;
  uint64_t violations = 0, nondeterministic = 0;
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
    if (!args.quiet || !r.ok()) std::printf("%s\n", sim::SummaryLine(r).c_str());
    nlohmann::json j = sim::ResultToJson(c, r);
    if (!r.ok()) {
      ++violations;
      for (const sim::Violation& v : r.violations) std::printf("  violation: %s\n", v.message.c_str());
      std::printf("  reproduce: %s\n", sim::ReproCommand(c).c_str());
    }
    for (const sim::FailoverEvent& f : r.failovers) {
      if (f.fault_ns >= 0) failover_ms.push_back((f.serving_ns - f.fault_ns) / 1'000'000);
      if (f.cause == "crash" && f.fault_ns >= 0) {
        crash_serving_ms.push_back((f.serving_ns - f.fault_ns) / 1'000'000);
        if (f.lock_acquired_ns >= 0) crash_acquire_ms.push_back((f.lock_acquired_ns - f.fault_ns) / 1'000'000);
      }
    }
    if (args.check_determinism) {
      sim::SimConfig again = c;
      again.trace_sink = nullptr;
      const sim::DeterminismReport d = sim::CheckDeterminism(again);
      const bool same_as_first = d.identical && d.hash_first == r.trace_hash;
      j["deterministic"] = same_as_first;
      if (same_as_first) {
        std::printf("  determinism: rerun gave the same trace hash %016" PRIx64 "\n", r.trace_hash);
      } else {
        ++nondeterministic;
        std::printf("  determinism: NOT deterministic (hashes %016" PRIx64 " / %016" PRIx64 "), first diverging checkpoint %lld\n"
                    "    first run:  %s\n    second run: %s\n",
                    d.hash_first, d.hash_second, static_cast<long long>(d.diverging_checkpoint), d.first_line.c_str(),
                    d.second_line.c_str());
      }
    }
    seeds.push_back(std::move(j));
    if (seed == last) break;
  }
  const uint64_t runs = last - first + 1;
  std::printf("%" PRIu64 " seed(s), %" PRIu64 " with violations%s; failover (fault to new leader serving) p50=%lld ms "
              "p99=%lld ms; after a leader crash: lock acquired p99=%lld ms, serving p99=%lld ms\n",
              runs, violations, args.check_determinism ? (nondeterministic ? ", NOT deterministic" : ", deterministic") : "",
              static_cast<long long>(sim::Percentile(failover_ms, 50)), static_cast<long long>(sim::Percentile(failover_ms, 99)),
              static_cast<long long>(sim::Percentile(crash_acquire_ms, 99)),
              static_cast<long long>(sim::Percentile(crash_serving_ms, 99)));
  if (!args.json_out.empty()) {
    nlohmann::json summary = {{"runs", runs},
                              {"violations", violations},
                              {"failover_ms", {{"count", failover_ms.size()}, {"p50", sim::Percentile(failover_ms, 50)},
                                               {"p99", sim::Percentile(failover_ms, 99)}}},
                              {"leader_crash", {{"count", crash_serving_ms.size()},
                                                {"lock_acquired_p99_ms", sim::Percentile(crash_acquire_ms, 99)},
                                                {"serving_p99_ms", sim::Percentile(crash_serving_ms, 99)}}}};
    if (args.check_determinism) summary["nondeterministic"] = nondeterministic;
    WriteJson(args.json_out, {{"summary", summary}, {"seeds", seeds}});
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
       app->add_flag("--data", args->data,
                     "Run the data plane too: the production store and TransferClient over 3 simulated paths, with "
                     "store faults and power losses (durable commits on)");
       app->add_option("--bug", args->bug,
                       "Plant a bug in the product: no-safety-margin, lease-from-response, serve-while-demoting, "
                       "fence-off, recovery-skips-fence, late-read-into-caller, health-never-trips, skip-verification");
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
