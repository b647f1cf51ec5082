// HealthBreakerStore: the ucm_health_mon poll loop and the fail-fast paths (see the header).
#include "core/store/health_breaker_store.h"

#include <spdlog/spdlog.h>

#include "core/common/thread_util.h"
#include "core/store/health_check_executor.h"

namespace kvchaos::store {
namespace {

Duration Seconds(double s) { return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s)); }

}  // namespace

HealthBreakerStore::HealthBreakerStore(Runtime& runtime, Store& inner, const StoreHealthConfig& config,
                                       std::vector<int> cpu_affinity)
    : runtime_(runtime),
      inner_(inner),
      config_(config),
      cpu_affinity_(std::move(cpu_affinity)),
      window_(config.health_window_size, config.failure_threshold),
      mu_(runtime),
      cv_(runtime) {
  if (config_.enabled) thread_ = runtime_.Spawn("ucm_health_mon", [this] { Loop(); });
}

HealthBreakerStore::~HealthBreakerStore() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    cv_.NotifyAll();
  }
  thread_.Join();
}

int HealthBreakerStore::polls() {
  MutexLock lock(mu_);
  return polls_;
}

void HealthBreakerStore::Loop() {
  if (!cpu_affinity_.empty()) {
    Status s = SetCurrentThreadAffinity(cpu_affinity_);
    if (!s.ok()) spdlog::warn("ucm_health_mon: cannot pin to the configured CPUs: {}", s.ToString());
  }
  HealthCheckExecutor executor(runtime_, kMaxChecksInFlight);
  const Duration interval = Seconds(config_.health_check_interval_s);
  const Duration timeout = Seconds(config_.health_check_timeout_s);
  for (;;) {
    // Polls start every interval, the poll's own time included (as upstream).
    const MonoTime poll_start = runtime_.Now();
    Status status = executor.workers_alive() >= kMaxChecksInFlight
                        ? Status::Unavailable("too many health checks still in flight")
                        : executor.Run([this] { return inner_.CheckHealth(); }, timeout);
    // Healthy: every poll counts; tripped: polls act as recovery probes.
    const SampleSource source = window_.healthy() ? SampleSource::kBusiness : SampleSource::kProbe;
    const WindowChange change = window_.Record(status.ok(), source);
    if (!status.ok()) spdlog::warn("store health check failed: {}", status.ToString());
    if (change == WindowChange::kTripped) {
      tripped_.store(true, std::memory_order_release);
      spdlog::warn("store breaker open: {} failed health checks in the last {} ({})", window_.failures(),
                   window_.count(), status.ToString());
    } else if (change == WindowChange::kRecovered) {
      tripped_.store(false, std::memory_order_release);
      spdlog::info("store breaker closed: {} healthy checks in a row", window_.window_size());
    }
    MutexLock lock(mu_);
    ++polls_;
    const MonoTime next = poll_start + interval;
    while (!stop_ && cv_.WaitUntil(mu_, next)) {
    }
    if (stop_) break;
  }
}

Result<std::vector<bool>> HealthBreakerStore::Lookup(std::span<const BlockId> ids) {
  if (tripped()) return std::vector<bool>(ids.size(), false);
  return inner_.Lookup(ids);
}

Result<TaskHandle> HealthBreakerStore::Dump(TransferTask task) {
  if (tripped()) return Status::StoreUnhealthy("store breaker is open: dump refused");
  return inner_.Dump(std::move(task));
}

Result<TaskHandle> HealthBreakerStore::Load(TransferTask task) {
  if (tripped()) return Status::StoreUnhealthy("store breaker is open: load refused");
  return inner_.Load(std::move(task));
}

Status HealthBreakerStore::Wait(TaskHandle handle) { return inner_.Wait(handle); }

Status HealthBreakerStore::CheckHealth() {
  if (tripped()) return Status::StoreUnhealthy("store breaker is open");
  return inner_.CheckHealth();
}

Status HealthBreakerStore::Remove(std::span<const BlockId> ids) { return inner_.Remove(ids); }

}  // namespace kvchaos::store
