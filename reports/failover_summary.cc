// Aggregation for failover reports (see failover_summary.h).
#include "reports/failover_summary.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace kvchaos::reports {

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const size_t index = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(sorted.size()))) - 1;
  return sorted[index];
}

FailoverSummary Summarize(const std::vector<harness::RunResult>& results) {
  FailoverSummary s;
  std::set<uint64_t> seeds;
  std::set<std::string> builds;
  std::map<std::string, ScenarioRuns> scenarios;
  std::map<std::string, std::set<uint64_t>> scenario_seeds;
  std::map<std::string, ClassStats> classes;
  std::map<std::pair<std::string, std::string>, CoordinationStats> kinds;
  for (const harness::RunResult& r : results) {
    ++s.runs;
    if (!r.passed()) {
      ++s.failed_runs;
      s.failed.push_back(&r);
    }
    seeds.insert(r.seed);
    builds.insert(r.build_id);
    ScenarioRuns& sc = scenarios[r.scenario_name];
    sc.name = r.scenario_name;
    sc.hash = r.scenario_hash;
    if (sc.modes.find(r.mode) == std::string::npos) sc.modes = sc.modes.empty() ? r.mode : "sim, real";
    ++sc.runs;
    if (r.data_plane) {
      DataPlaneTotals& d = sc.data_plane;
      ++d.runs;
      d.saves += r.counters.saves;
      d.loads += r.counters.loads;
      for (const auto& [code, count] : r.data_plane->errors_by_code) d.errors_by_code[code] += count;
      d.corrupt_detected += r.counters.corrupt_reads_detected;
      d.corrupt_returned += r.counters.corrupt_reads_returned;
      d.acked_blocks += r.counters.acked_blocks;
      d.acked_unreadable += r.counters.acked_blocks_unreadable;
      d.health_transitions += r.data_plane->health_transitions;
    }
    if (r.history) {
      HistoryTotals& h = sc.history;
      ++h.runs;
      h.operations += r.history->operations;
      h.keys += r.history->keys;
      h.keys_not_linearizable += r.history->keys_not_linearizable;
      h.keys_unknown_budget += r.history->keys_unknown_budget;
      h.lost_writes += r.history->lost_writes;
      h.non_monotonic_reads += r.history->non_monotonic_reads;
      h.read_your_writes += r.history->read_your_writes;
      if (h.first_anomaly.empty() && !r.history->first_anomaly.empty()) {
        h.first_anomaly = r.history->first_anomaly;
        h.anomaly = r.history->anomaly;
        h.anomaly_ops = r.history->anomaly_ops;
        h.anomaly_key = r.history->anomaly_key;
        h.anomaly_repro = r.ReproCommand();
      }
    }
    sc.failed += r.passed() ? 0 : 1;
    scenario_seeds[r.scenario_name].insert(r.seed);
    s.dual_acting_windows += r.counters.dual_acting_windows;
    s.dual_acting_ms += r.counters.dual_acting_ms;
    s.stale_writes_accepted += r.counters.stale_writes_accepted;
    s.stale_writes_rejected += r.counters.stale_writes_rejected;
    const std::string coordination = r.coordination.empty() ? "not recorded" : r.coordination;
    CoordinationStats& kind = kinds[{coordination, r.mode}];
    kind.coordination = coordination;
    kind.mode = r.mode;
    ++kind.runs;
    kind.dual_acting_windows += r.counters.dual_acting_windows;
    kind.dual_acting_ms += r.counters.dual_acting_ms;
    kind.stale_writes_accepted += r.counters.stale_writes_accepted;
    kind.token_regressions += r.counters.token_regressions;
    kind.duplicate_lock_holders += r.counters.duplicate_lock_holders;
    for (const harness::FailoverEvent& f : r.failovers) {
      ++s.failovers;
      kind.failover_ms.push_back(f.failover_ms());
      kind.unavailable_ms.push_back(f.unavailable_ms());
      if (f.unnecessary) ++kind.unnecessary;
      ClassStats& c = classes[f.fault_class];
      c.fault_class = f.fault_class;
      c.failover_ms.push_back(f.failover_ms());
      c.unavailable_ms.push_back(f.unavailable_ms());
      if (f.reelection()) ++c.reelections;
      if (f.unnecessary) {
        ++c.unnecessary;
        ++s.unnecessary_failovers;
      }
      const auto class_bound = r.class_failover_bounds_ms.find(f.fault_class);
      const std::optional<int64_t> bound =
          class_bound != r.class_failover_bounds_ms.end() ? std::optional<int64_t>(class_bound->second) : r.failover_bound_ms;
      if (bound) {
        c.bound_ms = c.bound_ms ? std::min(*c.bound_ms, *bound) : *bound;
        if (f.failover_ms() > static_cast<double>(*bound)) ++c.over_bound;
      }
    }
  }
  s.seeds.assign(seeds.begin(), seeds.end());
  s.build_ids.assign(builds.begin(), builds.end());
  for (auto& [name, sc] : scenarios) {
    sc.seeds.assign(scenario_seeds[name].begin(), scenario_seeds[name].end());
    s.scenarios.push_back(sc);
  }
  for (auto& [name, c] : classes) {
    std::sort(c.failover_ms.begin(), c.failover_ms.end());
    c.p50 = Percentile(c.failover_ms, 50);
    c.p90 = Percentile(c.failover_ms, 90);
    c.p99 = Percentile(c.failover_ms, 99);
    c.max = c.failover_ms.back();
    std::sort(c.unavailable_ms.begin(), c.unavailable_ms.end());
    c.unavailable_p99 = Percentile(c.unavailable_ms, 99);
    c.unavailable_max = c.unavailable_ms.back();
    double total = 0;
    for (double v : c.failover_ms) total += v;
    c.mean = total / static_cast<double>(c.failover_ms.size());
    s.classes.push_back(std::move(c));
  }
  for (auto& [key, kind] : kinds) {
    std::sort(kind.failover_ms.begin(), kind.failover_ms.end());
    std::sort(kind.unavailable_ms.begin(), kind.unavailable_ms.end());
    kind.p50 = Percentile(kind.failover_ms, 50);
    kind.p99 = Percentile(kind.failover_ms, 99);
    kind.max = kind.failover_ms.empty() ? 0 : kind.failover_ms.back();
    kind.unavailable_p99 = Percentile(kind.unavailable_ms, 99);
    s.coordination.push_back(std::move(kind));
  }
  return s;
}

nlohmann::json SummaryToJson(const FailoverSummary& s) {
  using nlohmann::json;
  json classes = json::object();
  for (const ClassStats& c : s.classes) {
    classes[c.fault_class] = {{"failovers", c.failover_ms.size()},
                              {"p50_ms", c.p50},
                              {"p90_ms", c.p90},
                              {"p99_ms", c.p99},
                              {"max_ms", c.max},
                              {"mean_ms", c.mean},
                              {"unavailable_p99_ms", c.unavailable_p99},
                              {"unavailable_max_ms", c.unavailable_max},
                              {"bound_ms", c.bound_ms ? json(*c.bound_ms) : json(nullptr)},
                              {"p99_within_bound", c.bound_ms ? json(c.p99 <= static_cast<double>(*c.bound_ms))
                                                              : json(nullptr)},
                              {"over_bound", c.over_bound},
                              {"unnecessary", c.unnecessary},
                              {"reelections", c.reelections}};
  }
  json scenarios = json::array();
  for (const ScenarioRuns& sc : s.scenarios) {
    const DataPlaneTotals& d = sc.data_plane;
    json data_plane = d.runs == 0 ? json(nullptr)
                                  : json{{"runs", d.runs},
                                         {"saves", d.saves},
                                         {"loads", d.loads},
                                         {"errors_by_code", d.errors_by_code},
                                         {"corrupt_reads_detected", d.corrupt_detected},
                                         {"corrupt_reads_returned", d.corrupt_returned},
                                         {"acked_blocks", d.acked_blocks},
                                         {"acked_blocks_unreadable", d.acked_unreadable},
                                         {"health_transitions", d.health_transitions}};
    const HistoryTotals& h = sc.history;
    json history = h.runs == 0 ? json(nullptr)
                               : json{{"runs", h.runs},
                                      {"operations", h.operations},
                                      {"keys", h.keys},
                                      {"keys_not_linearizable", h.keys_not_linearizable},
                                      {"keys_unknown_budget", h.keys_unknown_budget},
                                      {"lost_writes", h.lost_writes},
                                      {"non_monotonic_reads", h.non_monotonic_reads},
                                      {"read_your_writes", h.read_your_writes},
                                      {"first_anomaly", h.first_anomaly.empty() ? json(nullptr) : json(h.first_anomaly)},
                                      {"anomaly", h.anomaly},
                                      {"anomaly_repro", h.anomaly_repro.empty() ? json(nullptr) : json(h.anomaly_repro)}};
    scenarios.push_back({{"name", sc.name},
                         {"hash", sc.hash},
                         {"modes", sc.modes},
                         {"runs", sc.runs},
                         {"failed", sc.failed},
                         {"seeds", sc.seeds},
                         {"data_plane", data_plane},
                         {"history", history}});
  }
  json coordination = json::array();
  for (const CoordinationStats& k : s.coordination) {
    const bool timed = !k.failover_ms.empty();
    coordination.push_back({{"coordination", k.coordination},
                            {"mode", k.mode},
                            {"runs", k.runs},
                            {"failovers", k.failover_ms.size()},
                            {"p50_ms", timed ? json(k.p50) : json(nullptr)},
                            {"p99_ms", timed ? json(k.p99) : json(nullptr)},
                            {"max_ms", timed ? json(k.max) : json(nullptr)},
                            {"unavailable_p99_ms", timed ? json(k.unavailable_p99) : json(nullptr)},
                            {"dual_acting_windows", k.dual_acting_windows},
                            {"dual_acting_ms", k.dual_acting_ms},
                            {"stale_writes_accepted", k.stale_writes_accepted},
                            {"token_regressions", k.token_regressions},
                            {"duplicate_lock_holders", k.mode == "sim" ? json(k.duplicate_lock_holders) : json(nullptr)},
                            {"unnecessary", k.unnecessary}});
  }
  json failed = json::array();
  for (const harness::RunResult* r : s.failed) {
    failed.push_back({{"scenario", r->scenario_name}, {"seed", r->seed}, {"repro", r->ReproCommand()}});
  }
  return json{{"format", "kvchaos-failover-summary/1"},
              {"runs", s.runs},
              {"failed_runs", s.failed_runs},
              {"seeds", s.seeds},
              {"scenarios", scenarios},
              {"build_ids", s.build_ids},
              {"failovers", s.failovers},
              {"fault_classes", classes},
              {"coordination", coordination},
              {"dual_acting_windows", s.dual_acting_windows},
              {"dual_acting_ms", s.dual_acting_ms},
              {"stale_writes_accepted", s.stale_writes_accepted},
              {"stale_writes_rejected", s.stale_writes_rejected},
              {"unnecessary_failovers", s.unnecessary_failovers},
              {"failed", failed}};
}

}  // namespace kvchaos::reports
