// Throughput of the history checker (sim/linearizability.h, issue 21), measured, never asserted:
// CheckHistory over histories of 10^3..10^6 meta ops on 1, 10 and 1,000 keys, 5 % of the writes
// with an unknown outcome (half of them applied). Each history is a sequential run of the meta
// model (start_write, finish_write, get_location, remove) with an interval drawn around each op's
// linearization point (points 1 us apart, intervals reaching up to 2.5 us either side: each op
// overlaps a few neighbours), so every history is linearizable and the search must find it.
// Counters: ops/s (history ops checked per second), steps, keys past the budget (20 steps per op).
// Run: build/<preset>/bench/history_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

#include "core/common/rng.h"
#include "sim/linearizability.h"

namespace kvchaos::sim {
namespace {

constexpr int64_t kPointNs = 1000;

struct KeyModel {
  enum class Kind { kAbsent, kWriting, kServing } kind = Kind::kAbsent;
  std::string session;
  int64_t checksum = 0;
  std::vector<std::string> sessions;  // told to clients
};

std::vector<HistoryRecord> MakeHistory(int64_t ops, int64_t keys, uint64_t seed) {
  Rng rng(seed);
  std::vector<KeyModel> models(static_cast<size_t>(keys));
  std::vector<HistoryRecord> out;
  out.reserve(static_cast<size_t>(ops));
  for (int64_t i = 0; i < ops; ++i) {
    const int64_t key = static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(keys)));
    KeyModel& m = models[static_cast<size_t>(key)];
    HistoryRecord r;
    r.client = "c" + std::to_string(rng.Uniform(8));
    r.key = "k" + std::to_string(key);
    const int64_t point = (i + 1) * kPointNs;
    r.invoke_ns = point - static_cast<int64_t>(rng.Uniform(2500));
    r.complete_ns = point + static_cast<int64_t>(rng.Uniform(2500));
    const uint64_t pick = rng.Uniform(100);
    const bool unknown = rng.Uniform(100) < 5;
    const bool applies = !unknown || rng.Uniform(2) == 0;
    if (unknown) {
      r.outcome = HistoryOutcome::kUnknown;
      r.error = "Timeout";
    }
    if (pick < 30 || (pick < 60 && m.sessions.empty())) {
      r.op = HistoryOp::kStartWrite;
      r.storage = "s1";
      const std::string session = "ws-1-" + std::to_string(i);
      if (m.kind == KeyModel::Kind::kServing) {
        r.found = !unknown;
        if (!unknown) r.checksum = m.checksum;
      } else {
        if (applies) {
          m.kind = KeyModel::Kind::kWriting;
          m.session = session;
        }
        if (!unknown) {
          r.session = session;
          m.sessions.push_back(session);
        }
      }
    } else if (pick < 60) {
      r.op = HistoryOp::kFinishWrite;
      r.session = m.sessions.back();
      r.checksum = i;
      if (m.kind == KeyModel::Kind::kWriting && m.session == r.session) {
        if (applies) {
          m.kind = KeyModel::Kind::kServing;
          m.checksum = i;
        }
      } else if (m.kind != KeyModel::Kind::kServing && !unknown) {
        r.outcome = HistoryOutcome::kFailed;
        r.error = "InvalidArgument: has no location being written by session";
      }
    } else if (pick < 97) {
      r.op = HistoryOp::kGetLocation;
      r.outcome = HistoryOutcome::kOk;
      r.error.clear();
      if (m.kind == KeyModel::Kind::kServing) {
        r.found = true;
        r.storage = "s1";
        r.checksum = m.checksum;
      }
    } else {
      r.op = HistoryOp::kRemove;
      if (applies) m.kind = KeyModel::Kind::kAbsent;
    }
    out.push_back(std::move(r));
  }
  return out;
}

const std::vector<HistoryRecord>& History(int64_t ops, int64_t keys) {
  static std::map<std::pair<int64_t, int64_t>, std::vector<HistoryRecord>> cache;
  auto [it, added] = cache.try_emplace({ops, keys});
  if (added) it->second = MakeHistory(ops, keys, static_cast<uint64_t>(ops * 1315423911 + keys));
  return it->second;
}

void CheckerThroughput(benchmark::State& state) {
  const int64_t ops = state.range(0);
  const int64_t keys = state.range(1);
  const std::vector<HistoryRecord>& h = History(ops, keys);
  HistoryCheckOptions options;
  // Generous (20 steps per op of a key), so the figure is the search's, yet bounded: a key past it
  // shows in past_budget and the label.
  options.max_steps_per_key = static_cast<uint64_t>(20 * (ops / keys) + 1000);
  HistoryCheck last;
  for (auto _ : state) {
    last = CheckHistory(h, options);
    benchmark::DoNotOptimize(last.steps);
  }
  state.counters["ops/s"] = benchmark::Counter(static_cast<double>(ops) * static_cast<double>(state.iterations()),
                                               benchmark::Counter::kIsRate);
  state.counters["steps"] = static_cast<double>(last.steps);
  state.counters["past_budget"] = static_cast<double>(last.keys_unknown_budget);
  state.SetLabel(last.Verdict());
}

BENCHMARK(CheckerThroughput)
    ->ArgsProduct({{1'000, 10'000, 100'000, 1'000'000}, {1, 10, 1'000}})
    ->ArgNames({"ops", "keys"})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace
}  // namespace kvchaos::sim

BENCHMARK_MAIN();
