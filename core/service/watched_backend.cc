// WatchedBackend: forwards to the real backend and timestamps its answers (see watched_backend.h).
#include "core/service/watched_backend.h"

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

void WatchedBackend::Record(StatusCode code) {
  if (!Answered(code)) return;
  const MonoTime now = runtime_.Now();
  MutexLock lock(mu_);
  last_answer_ = now;
}

}  // namespace kvchaos::service
