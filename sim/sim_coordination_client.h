// SimCoordinationClient: one node's connection to the simulated Redis, implementing the
// production CoordinationBackend interface, so the unmodified LeaderElector runs against it.
// Each call sends a request over the simulated network and waits (through the SimRuntime, on the
// node's clock) for the reply or the timeout, then retries like the production Redis client —
// within a lock call's deadline like it, too (no attempt waits past it or starts after it).
// A timed-out write may still have been applied ("applied but the reply was lost"); a down
// Redis refuses at once (kUnavailable), a partitioned one times out (kTimeout). Over a
// SimSentinel each attempt goes to its primary of the moment; one that reaches a dead or demoted
// server is refused, and the retry goes to whichever the sentinels name then.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/runtime.h"
#include "core/election/coordination_backend.h"
#include "sim/sim_network.h"
#include "sim/sim_redis.h"
#include "sim/sim_rpc.h"
#include "sim/sim_sentinel.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

struct SimClientOptions {
  int64_t timeout_ms = 500;
  int retry_count = 1;
};

class SimCoordinationClient final : public election::CoordinationBackend {
 public:
  // `node` is the caller's host; Redis runs on redis.host().
  SimCoordinationClient(SimRuntime& runtime, SimNetwork& network, SimRedis& redis, int node,
                        SimClientOptions options = {});
  // Follows `sentinel`'s primary (redis-sentinel).
  SimCoordinationClient(SimRuntime& runtime, SimNetwork& network, SimSentinel& sentinel, int node,
                        SimClientOptions options = {});

  // The node's process is gone: pending and future calls fail at once (used to shut down the
  // threads of a crashed incarnation at the end of a run without touching the world).
  void CutOff() { rpc_.CutOff(); }

  Status Init() override { return Status::Ok(); }
  Result<election::LockGrant> TryLock(std::string_view key, std::string_view holder, Duration lease,
                                      MonoTime deadline) override;
  Status RenewLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override;
  Status Unlock(std::string_view key, std::string_view holder, MonoTime deadline) override;
  Result<election::LockHolderInfo> GetLockHolder(std::string_view key, MonoTime deadline) override;
  Result<election::FencingToken> RaiseTokenFloor(std::string_view key, std::string_view holder,
                                                 election::FencingToken floor, MonoTime deadline) override;
  Status SetValue(std::string_view key, std::string_view value) override;
  Status SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) override;
  Result<std::string> GetValue(std::string_view key) override;
  Status DeleteValue(std::string_view key) override;
  Result<std::vector<election::KeyValue>> ListValues(std::string_view prefix) override;
  std::string Describe() const override;

 private:
  // Value calls have no deadline (only lock calls take one).
  BackendReply Call(BackendRequest request, MonoTime deadline = election::kNoDeadline);
  BackendReply Attempt(const BackendRequest& request, Duration timeout);

  SimRedis& Server() { return sentinel_ != nullptr ? sentinel_->primary() : *redis_; }

  SimRuntime& runtime_;
  SimRedis* redis_ = nullptr;        // one redis-server, or
  SimSentinel* sentinel_ = nullptr;  // a primary and its replica
  const int node_;
  const SimClientOptions options_;
  SimRpc<BackendReply> rpc_;
};

}  // namespace kvchaos::sim
