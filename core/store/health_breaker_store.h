// HealthBreakerStore: the outer breaker of upstream's Pipeline store, around any Store. A thread
// named `ucm_health_mon` polls the inner store's CheckHealth() every health_check_interval_s, each
// poll through a HealthCheckExecutor with health_check_timeout_s (a poll that does not answer in
// time is a failure; at most 64 polls may be stuck at once, past that a poll fails without running),
// and feeds its own HealthWindow. While tripped, Lookup reports every block missing and Dump/Load
// fail at once with StoreUnhealthy; tasks already in flight finish normally, and Wait, Remove pass
// through. It closes again after a full window of healthy polls.
// `store_health.enabled: false` turns off only this breaker (every call passes through and no
// thread runs); the PosixStore's startup check, passive feedback and recovery stay on regardless.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "core/common/runtime.h"
#include "core/store/health_window.h"
#include "core/store/store.h"
#include "core/store/store_config.h"

namespace kvchaos::store {

class HealthBreakerStore final : public Store {
 public:
  static constexpr int kMaxChecksInFlight = 64;

  // `inner` must outlive the breaker. Starts polling when config.enabled.
  HealthBreakerStore(Runtime& runtime, Store& inner, const StoreHealthConfig& config,
                     std::vector<int> cpu_affinity = {});
  ~HealthBreakerStore() override;
  HealthBreakerStore(const HealthBreakerStore&) = delete;
  HealthBreakerStore& operator=(const HealthBreakerStore&) = delete;

  Result<std::vector<bool>> Lookup(std::span<const BlockId> ids) override;
  Result<TaskHandle> Dump(TransferTask task) override;
  Result<TaskHandle> Load(TransferTask task) override;
  Status Wait(TaskHandle handle) override;
  Status CheckHealth() override;
  Status Remove(std::span<const BlockId> ids) override;
  // Passes through, tripped or not: the inner store answers kUnknown for paths it cannot use.
  void Abandon(std::span<const BlockId> ids) override { inner_.Abandon(ids); }
  Result<std::vector<BlockPresence>> Presence(std::span<const BlockId> ids,
                                              std::span<const uint8_t> inline_header = {}) override {
    return inner_.Presence(ids, inline_header);
  }
  std::optional<BlockGeometry> Geometry() const override { return inner_.Geometry(); }
  int Concurrency() const override { return inner_.Concurrency(); }

  bool tripped() const { return tripped_.load(std::memory_order_acquire); }
  // The breaker's own window, fed by its polls only (lock-free reads).
  const HealthWindow& window() const { return window_; }
  int polls() EXCLUDES(mu_);

 private:
  void Loop();

  Runtime& runtime_;
  Store& inner_;
  StoreHealthConfig config_;
  std::vector<int> cpu_affinity_;
  HealthWindow window_;
  std::atomic<bool> tripped_{false};
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  int polls_ GUARDED_BY(mu_) = 0;
  Thread thread_;
};

}  // namespace kvchaos::store
