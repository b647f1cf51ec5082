#include "core/store/store_metrics.h"

#include <string.h>  // strerrorname_np

#include <string>

namespace kvchaos::store {

void WriteStoreMetrics(PosixStore& store, MetricsRegistry& out) {
  out.Set("kvchaos_store_healthy", "1 when the store serves (some backend path is available), else 0.", {},
          store.CheckHealth().ok() ? 1 : 0);
  for (const BackendStatus& b : store.BackendStates()) {
    const MetricLabels labels{{"backend", b.path}};
    out.Set("kvchaos_store_backend_available", "1 when the backend path takes I/O, 0 while its breaker is open.",
            labels, b.available ? 1 : 0);
    out.Set("kvchaos_store_backend_window_results", "Results (I/O and probes) in the backend path's health window.",
            labels, b.window_count);
    out.Set("kvchaos_store_backend_window_failures", "Failures among the results in the backend path's health window.",
            labels, b.window_failures);
    out.Add("kvchaos_store_backend_attempt_timeouts_total",
            "I/O attempts on the backend path given up at their deadline (per-attempt timeout).", labels,
            static_cast<double>(b.io.attempt_timeouts));
    out.Add("kvchaos_store_backend_late_completions_total",
            "I/O attempts on the backend path that completed after their deadline (their result only fed the window).",
            labels, static_cast<double>(b.io.late_completions));
    out.Add("kvchaos_store_backend_retries_total",
            "I/O attempts that retried a shard on the backend path after its attempt on another path failed.", labels,
            static_cast<double>(b.io.retries));
    for (const auto& [err, count] : b.io.errors_by_errno) {
      const char* name = err == 0 ? nullptr : strerrorname_np(err);
      out.Add("kvchaos_store_backend_io_errors_total", "Failed I/O attempts on the backend path, by errno.",
              {{"backend", b.path}, {"errno", name != nullptr ? name : std::to_string(err)}},
              static_cast<double>(count));
    }
    // Both directions appear from the start, so a rate() sees the first transition.
    for (const char* to : {"available", "unavailable"}) {
      out.Add("kvchaos_store_backend_transitions_total", "Health transitions of the backend path, by the state entered.",
              {{"backend", b.path}, {"to", to}}, 0);
    }
  }
  for (const HealthTransition& t : store.Transitions()) {
    out.Add("kvchaos_store_backend_transitions_total", "Health transitions of the backend path, by the state entered.",
            {{"backend", t.path}, {"to", t.available ? "available" : "unavailable"}});
  }
}

}  // namespace kvchaos::store
