#include "core/client/client_metrics.h"

#include "core/store/store_metrics.h"

namespace kvchaos::client {

void WriteTransferMetrics(const TransferClient& transfer, const std::string& storage, MetricsRegistry& out) {
  static constexpr const char* kHelp = "Blocks whose checksum differed from the one kept in meta, by storage.";
  out.Add("kvchaos_client_checksum_mismatches_total", kHelp, {{"storage", storage}}, 0);
  for (const auto& [name, count] : transfer.MismatchCounts()) {
    out.Add("kvchaos_client_checksum_mismatches_total", kHelp, {{"storage", name}}, static_cast<double>(count));
  }
  static constexpr const char* kMisroutedHelp =
      "Reads whose block's inline header named another key (meta pointed at another block), by storage.";
  out.Add("kvchaos_client_misrouted_reads_total", kMisroutedHelp, {{"storage", storage}}, 0);
  for (const auto& [name, count] : transfer.MisroutedCounts()) {
    out.Add("kvchaos_client_misrouted_reads_total", kMisroutedHelp, {{"storage", name}}, static_cast<double>(count));
  }
}

void WriteCacheClientMetrics(CacheClient& client, MetricsRegistry& out) {
  WriteTransferMetrics(client.transfer(), client.config().storage, out);
  store::WriteStoreMetrics(client.posix_store(), out);
}

}  // namespace kvchaos::client
