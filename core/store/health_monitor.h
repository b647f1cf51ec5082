// HealthMonitor: the one recovery thread of a PosixStore, `ucm_health_pmon`. Every interval it
// probes, in configured order, only the backends that are unavailable (healthy paths are never
// probed: business I/O watches them), each probe through the HealthCheckExecutor with the probe
// timeout, and feeds each result — a timeout counts as a failure — to that backend's window. A
// backend comes back after a full window of successful probes. Time, waits and the thread go
// through kvchaos::Runtime; with cpu_affinity set the monitor pins itself first, so the
// ucm_health_io workers it starts inherit the same CPUs.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/store/backend_set.h"
#include "core/store/health_check_executor.h"

namespace kvchaos::store {

class HealthMonitor {
 public:
  using ProbeFn = std::function<Status(int backend)>;

  HealthMonitor(Runtime& runtime, BackendSet& backends, ProbeFn probe, Duration interval, Duration probe_timeout,
                std::vector<int> cpu_affinity);
  ~HealthMonitor();  // Stop()

  void Start();
  // Wakes the monitor, waits for the probe in progress (bounded by the probe timeout) and joins the
  // monitor and every ucm_health_io worker, retired ones included.
  void Stop();

  int probes_run() EXCLUDES(mu_);
  int workers_started() EXCLUDES(mu_);

 private:
  void Loop();

  Runtime& runtime_;
  BackendSet& backends_;
  ProbeFn probe_;
  Duration interval_;
  Duration probe_timeout_;
  std::vector<int> cpu_affinity_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  int probes_run_ GUARDED_BY(mu_) = 0;
  int workers_started_ GUARDED_BY(mu_) = 0;
  Thread thread_;
};

}  // namespace kvchaos::store
