#include "faultfs/stats_metrics.h"

#include "core/common/metrics.h"

namespace kvchaos::faultfs {

Result<std::string> StatsToPrometheus(const nlohmann::json& stats) {
  MetricsRegistry out;
  const char* field = "enabled";
  try {
    out.Set("faultfs_rules_enabled", "1 while the mount's rules apply, 0 while they are disabled.", {},
            stats.at("enabled").get<bool>() ? 1 : 0);
    field = "faults";
    out.Add("faultfs_faults_total", "Faults injected since the mount (every rule's hits together).", {},
            stats.at("faults").get<double>());
    field = "rules";
    for (const nlohmann::json& rule : stats.at("rules")) {
      const MetricLabels labels{{"rule", rule.at("id").get<std::string>()}};
      out.Add("faultfs_rule_matched_total", "Calls a rule's path and ops matched.", labels, rule.at("matched").get<double>());
      out.Add("faultfs_rule_hits_total", "Calls a rule injected its fault into.", labels, rule.at("hits").get<double>());
      out.Set("faultfs_rule_hung_calls", "Calls a hang rule holds right now.", labels, rule.at("hung").get<double>());
    }
    field = "ops";
    for (auto it = stats.at("ops").begin(); it != stats.at("ops").end(); ++it) {
      const MetricLabels labels{{"op", it.key()}};
      const nlohmann::json& op = it.value();
      out.Add("faultfs_op_calls_total", "Calls per filesystem operation since the mount.", labels,
              op.at("calls").get<double>());
      out.Add("faultfs_op_errors_total", "Calls per operation that returned an error (injected or real).", labels,
              op.at("errors").get<double>());
      out.Set("faultfs_op_latency_mean_seconds", "Mean time per call of the operation.", labels,
              op.at("latency_us_mean").get<double>() / 1e6);
      out.Set("faultfs_op_latency_max_seconds", "Longest call of the operation.", labels,
              op.at("latency_us_max").get<double>() / 1e6);
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("faultfs stats reply: field \"") + field + "\": " + e.what());
  }
  return out.Render();
}

}  // namespace kvchaos::faultfs
