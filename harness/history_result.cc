// See history_result.h.
#include "harness/history_result.h"

namespace kvchaos::harness {

HistoryResult ToHistoryResult(const sim::HistorySummary& h, std::string file) {
  return HistoryResult{static_cast<int64_t>(h.operations), static_cast<int64_t>(h.keys), h.verdict,
                       static_cast<int64_t>(h.keys_not_linearizable), static_cast<int64_t>(h.keys_unknown_budget),
                       static_cast<int64_t>(h.lost_writes), static_cast<int64_t>(h.non_monotonic_reads),
                       static_cast<int64_t>(h.read_your_writes), h.check_ms, h.first_anomaly, h.anomaly_key,
                       h.anomaly, std::move(file)};
}

}  // namespace kvchaos::harness
