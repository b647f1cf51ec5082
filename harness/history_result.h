// The run result's history block (docs/history.md), filled the same way in both modes from the
// checker's summary of the run's meta calls.
#pragma once

#include <string>

#include "harness/run_result.h"
#include "sim/linearizability.h"

namespace kvchaos::harness {

// One op as the report's timeline draws it.
AnomalyOp ToAnomalyOp(const sim::HistoryRecord& record);
// `file`: the history's file name beside the result ("" when it was not written).
HistoryResult ToHistoryResult(const sim::HistorySummary& summary, std::string file);

}  // namespace kvchaos::harness
