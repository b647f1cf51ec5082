// A metadata node's state as Prometheus metrics (common/metrics.h), read when /metrics is asked
// (http_api.h adds the request counts and latencies): leadership (is_leader, the elector's state,
// the term's fencing token, the lease time left, the terms this node has led), the calls to the
// coordination backend (by call and code, timed: watched_backend.h), how long it has been silent
// (time since its last answer) and the node's health check.
#pragma once

#include "core/common/metrics.h"
#include "core/service/meta_node.h"

namespace kvchaos::service {

void WriteNodeMetrics(MetaNode& node, MetricsRegistry& out);

}  // namespace kvchaos::service
