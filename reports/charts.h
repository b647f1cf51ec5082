// The report's charts as standalone SVG: a failover-time CDF and a histogram for one fault class,
// each against the scenario's bound, and the leadership timeline of one run. Every chart has a
// title, labelled axes with units, and a legend saying what each mark is.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/run_result.h"
#include "reports/failover_summary.h"

namespace kvchaos::reports {

// Colours (Okabe–Ito, readable with the common colour-vision deficiencies).
inline constexpr const char* kBlue = "#0072B2";
inline constexpr const char* kOrange = "#E69F00";
inline constexpr const char* kVermillion = "#D55E00";
inline constexpr const char* kGreen = "#009E73";
inline constexpr const char* kSky = "#56B4E9";

std::string FailoverCdfSvg(const ClassStats& stats);
std::string FailoverHistogramSvg(const ClassStats& stats);
// Rows per node: when it believed it led, when it accepted writes, and the fault windows.
std::string LeadershipTimelineSvg(const harness::RunResult& run);
// The ops of one key's history anomaly: a lane per client, each op a bar from invoke to complete
// coloured by its outcome and labelled with the op, the value it wrote or read, and the node and
// term that served it; time in ms from the first invoke. "" when `ops` is empty.
std::string AnomalyTimelineSvg(const std::string& scenario, const std::string& key,
                               const std::vector<harness::AnomalyOp>& ops);

}  // namespace kvchaos::reports
