// A client's metrics for an embedding service to render with its own (common/metrics.h): the
// checksum mismatches its TransferClient saw per storage and, for a CacheClient, its store's
// health (store/store_metrics.h). The Python module's CacheClient.metrics() renders these.
#pragma once

#include "core/client/cache_client.h"
#include "core/client/transfer_client.h"
#include "core/common/metrics.h"

namespace kvchaos::client {

// kvchaos_client_checksum_mismatches_total{storage} and kvchaos_client_misrouted_reads_total{storage}
// (inline headers): the client's own storage appears at 0.
void WriteTransferMetrics(const TransferClient& transfer, const std::string& storage, MetricsRegistry& out);
// The transfer metrics and the store's.
void WriteCacheClientMetrics(CacheClient& client, MetricsRegistry& out);

}  // namespace kvchaos::client
