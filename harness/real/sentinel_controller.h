// SentinelController: the coordination backend of a real-mode run with `coordination:
// redis-sentinel` — a Redis primary, one replica and three sentinels (`redis-server --sentinel`,
// quorum 2) on loopback ports, their configs and logs under sentinel/ in the run directory.
// Failure detection is shortened (down-after-milliseconds 1000, failover-timeout 2000): a failover
// after the primary dies takes about 2-4 s.
//
// Faults: Failover() kills the primary and waits until every sentinel names the replica and it
// says it is the primary. CutReplication() first makes later writes reach the primary only (the
// replica's ACL user is disabled and its link dropped): asynchronous replication made
// deterministic, so the promoted replica lacks the lock and the fencing counter's newest values.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "harness/real/child_process.h"

namespace kvchaos::harness::real {

class SentinelController {
 public:
  static constexpr const char* kMasterName = "kvchaos-primary";

  // `dir`: the directory of every server's config, data and log (created).
  SentinelController(std::string binary, std::string dir);
  ~SentinelController();

  // Starts the primary and its replica, waits until the replica is in sync, starts the sentinels
  // and waits until each knows the replica and the other two, up to `timeout`.
  Status Start(Duration timeout);
  // "redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3/kvchaos-primary" (no query).
  std::string uri() const;
  // Every loopback port a client of the group connects to: the two servers, then the sentinels.
  std::vector<int> ClientPorts() const;

  Status CutReplication();
  // Kills the primary and waits up to `timeout` for the replica's promotion.
  Status Failover(Duration timeout);

 private:
  struct Server {
    std::string name;
    int port = 0;
    std::unique_ptr<ChildProcess> process;
  };
  Status Launch(Server& s, const std::string& config, bool sentinel);
  bool ReplicaInSync() const;
  bool SentinelsReady() const;
  bool Promoted() const;
  Status WaitFor(const std::string& what, Duration timeout, bool (SentinelController::*done)() const);

  std::string binary_;
  std::string dir_;
  std::vector<Server> servers_;    // 0: the first primary, 1: its replica
  std::vector<Server> sentinels_;
  bool primary_killed_ = false;  // by Failover: the first primary stays down
};

}  // namespace kvchaos::harness::real
