// HealthMonitor: the ucm_health_pmon loop (see health_monitor.h).
#include "core/store/health_monitor.h"

#include <spdlog/spdlog.h>

#include "core/common/thread_util.h"

namespace kvchaos::store {

HealthMonitor::HealthMonitor(Runtime& runtime, BackendSet& backends, ProbeFn probe, Duration interval,
                             Duration probe_timeout, std::vector<int> cpu_affinity)
    : runtime_(runtime),
      backends_(backends),
      probe_(std::move(probe)),
      interval_(interval),
      probe_timeout_(probe_timeout),
      cpu_affinity_(std::move(cpu_affinity)),
      mu_(runtime),
      cv_(runtime) {}

HealthMonitor::~HealthMonitor() { Stop(); }

void HealthMonitor::Start() {
  thread_ = runtime_.Spawn("ucm_health_pmon", [this] { Loop(); });
}

void HealthMonitor::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    cv_.NotifyAll();
  }
  thread_.Join();
}

int HealthMonitor::probes_run() {
  MutexLock lock(mu_);
  return probes_run_;
}

int HealthMonitor::workers_started() {
  MutexLock lock(mu_);
  return workers_started_;
}

void HealthMonitor::Loop() {
  if (!cpu_affinity_.empty()) {
    Status s = SetCurrentThreadAffinity(cpu_affinity_);
    if (!s.ok()) spdlog::warn("ucm_health_pmon: cannot pin to the configured CPUs: {}", s.ToString());
  }
  // Lives on this thread so every worker is started (and inherits affinity) from here, and is
  // joined here when the loop ends.
  HealthCheckExecutor executor(runtime_);
  for (;;) {
    // Rounds start every interval, probes included (as upstream): a slow or stalled probe does not
    // push every later probe of every path back by its own time.
    const MonoTime round_start = runtime_.Now();
    for (int backend : backends_.Unavailable()) {
      {
        MutexLock lock(mu_);
        if (stop_) break;
      }
      Status status = executor.Run([this, backend] { return probe_(backend); }, probe_timeout_, backend);
      // Every failed probe is logged with its status (as upstream): it says why the path stays out.
      if (!status.ok()) spdlog::warn("recovery probe of '{}' failed: {}", backends_.path(backend), status.ToString());
      backends_.Record(backend, status.ok(), SampleSource::kProbe);
      MutexLock lock(mu_);
      ++probes_run_;
      workers_started_ = executor.workers_started();
    }
    MutexLock lock(mu_);
    const MonoTime next = round_start + interval_;
    while (!stop_ && cv_.WaitUntil(mu_, next)) {
    }
    if (stop_) break;
  }
}

}  // namespace kvchaos::store
