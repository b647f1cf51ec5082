// faultfs's `stats` reply (control_commands.h: rules with their hits, calls per operation) as
// Prometheus text (core/common/metrics.h), so a scraper or a CI job reads a mount's fault counts the
// way it reads a node's /metrics: `faultfs ctl SOCKET metrics`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace kvchaos::faultfs {

// InvalidArgument naming the field when `stats` is not a stats reply.
Result<std::string> StatsToPrometheus(const nlohmann::json& stats);

}  // namespace kvchaos::faultfs
