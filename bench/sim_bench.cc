// Figures of the deterministic simulator (issue 7), measured, never asserted:
//  - SimSwitch: one hand-off between two simulated threads (thread -> scheduler -> thread);
//  - SimFiveNodes: simulated seconds per real second (x real time) for 5 nodes with per-event
//    trace hashing and the default chaos;
//  - SimTenMinuteThreeNodes: ten-minute 3-node runs per second on one core, and x real time: the
//    elector world (production MetaNode nodes, meta clients, probes; no data plane);
//  - SimDataPlane: x real time of the whole product: 3 nodes, 3 store paths to one storage, the
//    production PosixStore and TransferClient (crc64_full) at 100 ops/s (50 saves, 50 loads of
//    4 KiB blocks) with store faults on (EIO, latency and bit flips on the paths in turn) and the
//    default election chaos;
//  - SimLeaderCrashFailover: a healthy 3-node cluster whose leader crashes once per seed; p50/p99
//    of crash -> new lock acquired and crash -> new leader serving, next to the bound
//    lease_ms + loop_interval_ms + RTT.
// Run: build/<preset>/bench/sim_bench  (KVCHAOS_LOG is ignored: the elector's logs are off).
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <stdexcept>
#include <vector>

#include "faultfs/rule_parser.h"
#include "sim/sim_driver.h"
#include "sim/sim_runtime.h"
#include "sim/world.h"

namespace kvchaos::sim {
namespace {

void SimSwitch(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    SimRuntime rt;
    const int node = rt.AddNode("n1");
    constexpr int kYields = 100'000;
    std::vector<Thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.push_back(rt.SpawnOn(node, "y" + std::to_string(t), [&rt] {
        for (int i = 0; i < kYields; ++i) rt.Yield();
      }));
    }
    state.ResumeTiming();
    rt.RunUntil(INT64_MAX);
    state.PauseTiming();
    threads.clear();
    state.ResumeTiming();
  }
  // Each yield hands the CPU to the other thread through the scheduler.
  state.SetItemsProcessed(state.iterations() * 2 * 100'000);
  state.counters["ns_per_handoff"] =
      benchmark::Counter(static_cast<double>(state.iterations() * 2 * 100'000), benchmark::Counter::kIsRate |
                                                                                 benchmark::Counter::kInvert);
}
BENCHMARK(SimSwitch)->Unit(benchmark::kMillisecond);

void SimFiveNodes(benchmark::State& state) {
  spdlog::set_level(spdlog::level::off);
  uint64_t seed = 1;
  double simulated_s = 0;
  uint64_t events = 0;
  for (auto _ : state) {
    SimConfig c;
    c.seed = seed++;
    c.nodes = 5;
    c.duration_ms = 600'000;
    const SimResult r = RunSimulation(c);
    simulated_s += static_cast<double>(r.simulated_ns) / 1e9;
    events += r.events;
    benchmark::DoNotOptimize(r.trace_hash);
  }
  state.counters["x_real_time"] = benchmark::Counter(simulated_s, benchmark::Counter::kIsRate);
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(SimFiveNodes)->Unit(benchmark::kMillisecond)->MinTime(3.0);

void SimTenMinuteThreeNodes(benchmark::State& state) {
  spdlog::set_level(spdlog::level::off);
  uint64_t seed = 1;
  double simulated_s = 0;
  for (auto _ : state) {
    SimConfig c;
    c.seed = seed++;
    c.duration_ms = 600'000;
    const SimResult r = RunSimulation(c);
    simulated_s += static_cast<double>(r.simulated_ns) / 1e9;
    benchmark::DoNotOptimize(r.trace_hash);
  }
  state.counters["runs_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["x_real_time"] = benchmark::Counter(simulated_s, benchmark::Counter::kIsRate);
}
BENCHMARK(SimTenMinuteThreeNodes)->Unit(benchmark::kMillisecond)->MinTime(3.0);

faultfs::Rule BenchRule(const char* text) {
  Result<faultfs::Rule> rule = faultfs::ParseRuleText(text, "bench");
  if (!rule.ok()) throw std::runtime_error(rule.status().ToString());
  return *rule;
}

void SimDataPlane(benchmark::State& state) {
  spdlog::set_level(spdlog::level::off);
  uint64_t seed = 1;
  double simulated_s = 0;
  int64_t ops = 0;
  for (auto _ : state) {
    SimConfig c;
    c.seed = seed++;
    c.duration_ms = 600'000;
    c.lease_ms = 2000;
    c.clients = 0;  // the data plane's TransferClient is the meta service's client
    c.data.paths = {"p1", "p2", "p3"};
    c.data.save_rate_per_s = 50;
    c.data.load_rate_per_s = 50;
    c.data.block_size = 4096;
    c.data.key_space = 4096;
    c.store_rules = {{"p1", BenchRule(R"({id: eio, action: errno, errno: EIO, probability: 0.3})")},
                     {"p2", BenchRule(R"({id: slow, action: latency, latency: 20ms, probability: 0.5})")},
                     {"p3", BenchRule(R"({id: flips, action: flip_read_bits, ops: [read], bits: 1})")}};
    // Each rule for 20 s in every minute of the chaos phase, the paths in turn.
    for (int64_t minute = 1; minute < 7; ++minute) {
      FaultAction f;
      f.kind = FaultKind::kStoreFault;
      f.store_rule = static_cast<int>(minute % 3);
      f.t = minute * 60'000'000'000LL;
      f.duration_ns = 20'000'000'000LL;
      c.explicit_faults.push_back(f);
    }
    const SimResult r = RunSimulation(c);
    simulated_s += static_cast<double>(r.simulated_ns) / 1e9;
    ops += r.data.saves + r.data.loads;
    if (r.data.corrupt_returned > 0) state.SkipWithError("corrupt data returned as good");
    benchmark::DoNotOptimize(r.trace_hash);
  }
  state.counters["x_real_time"] = benchmark::Counter(simulated_s, benchmark::Counter::kIsRate);
  state.counters["data_ops_per_s_host"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
}
BENCHMARK(SimDataPlane)->Unit(benchmark::kMillisecond)->MinTime(5.0);

void SimLeaderCrashFailover(benchmark::State& state) {
  spdlog::set_level(spdlog::level::off);
  std::vector<int64_t> acquired_ms, serving_ms;
  uint64_t seed = 1;
  int64_t rtt_ns = 0;
  for (auto _ : state) {
    SimConfig c;
    c.seed = seed;
    c.faults = 0;  // nothing but the one crash
    c.duration_ms = 120'000;
    FaultAction crash;
    crash.kind = FaultKind::kCrash;
    crash.target_leader = true;
    crash.t = 20'000'000'000LL + static_cast<int64_t>((seed * 7919) % 10'000) * 1'000'000;  // any phase of a renew
    crash.duration_ns = 3 * c.lease_ms * 1'000'000;
    c.explicit_faults = {crash};
    ++seed;
    const SimResult r = RunSimulation(c);
    for (const FailoverEvent& f : r.failovers) {
      if (f.cause != "crash" || f.fault_ns < 0) continue;
      if (f.lock_acquired_ns >= 0) acquired_ms.push_back((f.lock_acquired_ns - f.fault_ns) / 1'000'000);
      serving_ms.push_back((f.serving_ns - f.fault_ns) / 1'000'000);
    }
    rtt_ns = 150'000 * 2 + 100'000;  // typical RTT of the default links (base + half jitter, both ways)
  }
  SimConfig defaults;
  state.counters["failovers"] = static_cast<double>(serving_ms.size());
  state.counters["acquired_p50_ms"] = static_cast<double>(Percentile(acquired_ms, 50));
  state.counters["acquired_p99_ms"] = static_cast<double>(Percentile(acquired_ms, 99));
  state.counters["serving_p50_ms"] = static_cast<double>(Percentile(serving_ms, 50));
  state.counters["serving_p99_ms"] = static_cast<double>(Percentile(serving_ms, 99));
  state.counters["bound_ms"] = static_cast<double>(defaults.lease_ms + defaults.loop_ms) + static_cast<double>(rtt_ns) / 1e6;
}
BENCHMARK(SimLeaderCrashFailover)->Unit(benchmark::kMillisecond)->Iterations(2000);

}  // namespace
}  // namespace kvchaos::sim

BENCHMARK_MAIN();
