// A PosixStore's health as Prometheus metrics (common/metrics.h), for a node, an embedding service
// or the Python module to render: whether the store serves, each backend path's availability and
// health window (results and failures in it), and the transitions seen per path and direction
// (BackendSet keeps the first 4096 of a process's life). Read at render time from the published
// snapshot: nothing here slows I/O down.
#pragma once

#include "core/common/metrics.h"
#include "core/store/posix_store.h"

namespace kvchaos::store {

// Writes the kvchaos_store_* families; `store` must be set up.
void WriteStoreMetrics(PosixStore& store, MetricsRegistry& out);

}  // namespace kvchaos::store
