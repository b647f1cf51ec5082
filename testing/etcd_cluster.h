// A real etcd cluster for tests: N members on free 127.0.0.1 ports (a client and a peer port
// each), their data in a temp dir, all killed (and their files removed) when the object goes
// away, even when the test fails. Election timing is shortened (heartbeat 50 ms, election 500 ms),
// which also brings etcd's minimum lease TTL down to 1 s, so lease expiry tests stay short.
//
//   auto etcd = EtcdCluster::Start(3);
//   if (!etcd) GTEST_SKIP() << EtcdCluster::SkipReason();   // only when etcd is absent
//   CreateCoordinationBackend(etcd->Uri("?prefix=t/"), ...);
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "testing/child_process.h"
#include "testing/temp_dir.h"

namespace kvchaos::testing {

class EtcdCluster {
 public:
  // nullptr when etcd is not installed; throws when it is installed but the cluster will not come
  // up (every member healthy) within 20 s.
  static std::unique_ptr<EtcdCluster> Start(int members);
  static std::string SkipReason();
  ~EtcdCluster();

  int size() const { return static_cast<int>(members_.size()); }
  // "127.0.0.1:PORT", the client (gateway) address of member i.
  std::string Endpoint(int i) const;
  // "etcd://127.0.0.1:P1,127.0.0.1:P2,.../" followed by `query` ("?prefix=x/").
  std::string Uri(const std::string& query = "") const;

  // SIGSTOP / SIGCONT member i: it stops answering while its sockets stay open.
  void Pause(int i);
  void Resume(int i);
  // SIGKILL member i (its data stays, for Restart).
  void Kill(int i);
  // Starts member i again on its ports and data and waits until it is healthy.
  void Restart(int i);
  // Waits until member i answers a request needing a leader with "no leader" (after the others
  // were killed); false when it still serves after `limit`.
  bool WaitUntilLeaderless(int i, std::chrono::milliseconds limit);

 private:
  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    std::unique_ptr<ChildProcess> process;
  };
  EtcdCluster() = default;
  void Launch(int i, bool first_start);
  void WaitHealthy(const std::vector<int>& members);

  TempDir dir_{"kvchaos-etcd"};
  std::string initial_cluster_;
  std::vector<Member> members_;
};

}  // namespace kvchaos::testing
