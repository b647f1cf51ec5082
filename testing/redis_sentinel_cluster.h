// A real Redis Sentinel setup for tests: one primary, one replica and three sentinels
// (`redis-server --sentinel`, quorum 2) on free 127.0.0.1 ports, their files in a temp dir, all
// killed when the object goes away, even when the test fails. Failure detection is shortened
// (down-after-milliseconds 1000, failover-timeout 2000), so a failover after the primary dies takes
// about 2-4 s; 1 s, not less, so that a loaded machine does not fail the primary over by itself
// in the middle of a test. Start() returns once every sentinel knows the replica and the other two sentinels,
// so a failover can start at once.
//
// The replica replicates as ACL user `repl`; CutReplication() disables that user on the primary
// and drops the replica's link, so writes made afterwards reach the primary only, and a failover
// then loses them (asynchronous replication, made deterministic).
//
//   auto cluster = RedisSentinelCluster::Start();
//   if (!cluster) GTEST_SKIP() << RedisSentinelCluster::SkipReason();
//   CreateCoordinationBackend(cluster->Uri("?cluster_name=t"), ...);
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "testing/child_process.h"
#include "testing/temp_dir.h"

namespace kvchaos::testing {

class RedisSentinelCluster {
 public:
  static constexpr const char* kMasterName = "kvchaos-primary";

  // nullptr when redis-server is not installed; throws when the setup does not come up within 20 s.
  static std::unique_ptr<RedisSentinelCluster> Start();
  static std::string SkipReason();
  ~RedisSentinelCluster();

  // "redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3/kvchaos-primary" followed by `query`.
  std::string Uri(const std::string& query = "") const;
  // The data servers: 0 starts as the primary, 1 as its replica.
  int server_port(int i) const { return servers_[static_cast<size_t>(i)].port; }
  int sentinel_port(int i) const { return sentinels_[static_cast<size_t>(i)].port; }
  // The port the first sentinel names as the primary now (0 when it does not answer).
  int PrimaryPort() const;
  // Waits until every sentinel names server `i` as the primary and it says it is one.
  bool WaitForPrimary(int i, std::chrono::milliseconds limit) const;
  // Waits until the replica has every write the primary has (WAIT 1).
  bool WaitForReplication(std::chrono::milliseconds limit) const;

  // Writes made after this reach the primary only (see the file comment).
  void CutReplication();
  // SIGKILL / SIGSTOP / SIGCONT data server i.
  void KillServer(int i);
  void PauseServer(int i);
  void ResumeServer(int i);

 private:
  struct Process {
    int port = 0;
    std::unique_ptr<ChildProcess> process;
  };
  RedisSentinelCluster() = default;
  void Launch();
  void WaitReady();

  TempDir dir_{"kvchaos-sentinel"};
  std::vector<Process> servers_;
  std::vector<Process> sentinels_;
};

}  // namespace kvchaos::testing
