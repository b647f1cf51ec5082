// WatchedBackend: forwards to the real backend and timestamps its answers (see watched_backend.h).
#include "core/service/watched_backend.h"

#include <chrono>
#include <string>

namespace kvchaos::service {

WatchedBackend::WatchedBackend(Runtime& runtime, std::unique_ptr<election::CoordinationBackend> inner)
    : runtime_(runtime), inner_(std::move(inner)), mu_(runtime) {}

std::optional<MonoTime> WatchedBackend::last_answer() {
  MutexLock lock(mu_);
  return last_answer_;
}

bool WatchedBackend::Answered(StatusCode code) {
  return code != StatusCode::kUnavailable && code != StatusCode::kTimeout && code != StatusCode::kIoError;
}

void WatchedBackend::Record(std::string_view call, MonoTime begun, StatusCode code) {
  const MonoTime now = runtime_.Now();
  metrics_.Add("kvchaos_node_coordination_requests_total",
               "Calls to the coordination backend (elector and heartbeat), by call and result code.",
               {{"call", std::string(call)}, {"code", StatusCodeName(code)}});
  metrics_.Observe("kvchaos_node_coordination_request_duration_seconds",
                   "Time a call to the coordination backend took, by call.", {{"call", std::string(call)}},
                   std::chrono::duration<double>(now - begun).count(), LatencyBucketsSeconds());
  if (!Answered(code)) return;
  MutexLock lock(mu_);
  last_answer_ = now;
}

}  // namespace kvchaos::service
