// EtcdController: the coordination backend of a real-mode run with `coordination: etcd` — a
// cluster of kEtcdMembers real etcd members on loopback ports (a client and a peer port each), each
// with its data directory and log (etcd<i>/) inside the run directory. Election timing is
// shortened (heartbeat 50 ms, election timeout 500 ms) so the cluster's own failover fits inside
// the scenario's leases, as the etcd contract tests run it.
//
// Faults: one member crashes (SIGKILL, then a restart on its ports with its data) or pauses
// (SIGSTOP / SIGCONT, its sockets open: callers wait out their timeouts); every member paused is
// a whole-backend outage that keeps the data.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "harness/real/child_process.h"

namespace kvchaos::harness::real {

// The etcd executable: PATH, then /usr/bin and /usr/local/bin; "" when absent.
std::string FindEtcd();

class EtcdController {
 public:
  // `dir`: the parent of the members' directories (created); `members`: how many.
  EtcdController(std::string binary, std::string dir, int members);
  ~EtcdController();

  // Picks the ports, starts every member and waits until each serves a quorum read, up to `timeout`.
  Status Start(Duration timeout);
  int size() const { return static_cast<int>(members_.size()); }
  // "etcd://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3" (no path or query).
  std::string uri() const;
  int client_port(int member) const { return members_[static_cast<size_t>(member)].client_port; }

  void Kill(int member);
  // Starts a killed member again on its ports and data, and waits until it serves (up to `timeout`).
  Status Restart(int member, Duration timeout);
  void Pause(int member);
  void Resume(int member);

 private:
  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    std::unique_ptr<ChildProcess> process;
  };
  ChildSpec SpecOf(const Member& m, bool first_start) const;
  Status WaitServing(const std::vector<int>& members, Duration timeout);

  std::string binary_;
  std::string dir_;
  std::string initial_cluster_;
  std::vector<Member> members_;
};

}  // namespace kvchaos::harness::real
