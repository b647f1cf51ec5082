// See history_result.h.
#include "harness/history_result.h"

namespace kvchaos::harness {

AnomalyOp ToAnomalyOp(const sim::HistoryRecord& r) {
  AnomalyOp op;
  op.client = r.client;
  op.op = sim::HistoryOpName(r.op);
  op.key = r.key;
  op.outcome = sim::HistoryOutcomeName(r.outcome);
  op.invoke_ms = static_cast<double>(r.invoke_ns) / 1e6;
  op.complete_ms = static_cast<double>(r.complete_ns) / 1e6;
  op.value = sim::OpValueText(r);
  op.node = r.node;
  op.term = r.term;
  return op;
}

HistoryResult ToHistoryResult(const sim::HistorySummary& h, std::string file) {
  std::vector<AnomalyOp> ops;
  for (const sim::HistoryRecord& r : h.anomaly_ops) ops.push_back(ToAnomalyOp(r));
  return HistoryResult{static_cast<int64_t>(h.operations), static_cast<int64_t>(h.keys), h.verdict,
                       static_cast<int64_t>(h.keys_not_linearizable), static_cast<int64_t>(h.keys_unknown_budget),
                       static_cast<int64_t>(h.lost_writes), static_cast<int64_t>(h.non_monotonic_reads),
                       static_cast<int64_t>(h.read_your_writes), h.check_ms, h.first_anomaly, h.anomaly_key,
                       h.anomaly, std::move(ops), std::move(file)};
}

}  // namespace kvchaos::harness
