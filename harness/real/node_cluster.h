// NodeCluster: the `kvchaos node` processes of a real-mode run. Each node gets a YAML config in
// the run directory with fixed loopback ports (picked free once, so a restarted node comes back
// on the same endpoints), the node id "node-<i>" (so cluster answers map to indexes), the
// scenario's lease, loop interval, safety margin and forbid-campaign time, the coordination URI
// (the client settings in its query) and the shared Redis meta indexer. With client_proxies each
// node's two HTTP ports get a LinkProxy in front, which the node advertises (so leader discovery
// sends the workload's calls through it): what the clients' path faults act on. The runner's own
// calls (the observer, demotes, start-up checks) go to the node directly.
//
// The node state (up, paused, down) is kept here for the observer, which must not wait on a
// frozen process, and for resolving `leader`/`follower` targets. Driven by one thread (the run's);
// State() may be read from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "harness/elector_settings.h"
#include "harness/real/child_process.h"
#include "harness/real/connect_redirect.h"
#include "harness/real/link_proxy.h"
#include "harness/real/fake_clock.h"

namespace kvchaos::harness::real {

// A loopback TCP port that was free a moment ago (bind to port 0, read it back, close).
Result<int> PickFreeLoopbackPort();

enum class NodeState { kUp, kPaused, kDown };

struct NodeClusterSpec {
  std::string kvchaos_binary;  // /proc/self/exe
  std::string dir;             // configs and logs go here
  int nodes = 1;
  int64_t lease_ms = 3000;
  int64_t loop_interval_ms = 200;
  // Safety margin and forbid-campaign time go into each node's config; the coordination URIs
  // below carry the client settings (CoordinationUriQuery).
  ElectorSettings elector;
  std::string coordination_uri;
  // Per node, when set (one per node): the URI node i uses instead, e.g. through its partition proxy.
  std::vector<std::string> node_coordination_uris;
  // Per node, when set (one per node): its connections to these ports go to its proxies instead,
  // through the connect preload at `connect_preload` (servers it learns the address of at run time).
  std::vector<std::vector<ConnectRedirect>> node_connect_redirects;
  std::string connect_preload;
  std::string indexer_uri;
  bool client_proxies = false;
  // Set when the scenario has clock faults: every node runs under the clock preload on its own clocks.
  NodeClocks* clocks = nullptr;
};

class NodeCluster {
 public:
  explicit NodeCluster(NodeClusterSpec spec);
  ~NodeCluster();  // kills every node

  // Writes the configs and starts every node, each answering on its admin port within `timeout`.
  Status Start(Duration timeout);

  int size() const { return static_cast<int>(nodes_.size()); }
  NodeState State(int i) const { return nodes_[static_cast<size_t>(i)]->state.load(); }
  std::string AdminEndpoint(int i) const;
  std::string MetaEndpoint(int i) const;
  std::vector<std::string> AdminEndpoints() const;
  // Where a client starts leader discovery: the admin proxies with client_proxies, else the nodes.
  std::vector<std::string> ClientAdminEndpoints() const;
  // The proxies on the clients' path to node i (meta, admin); empty without client_proxies.
  std::vector<LinkProxy*> ClientPath(int i) const;
  static std::string NodeId(int i) { return "node-" + std::to_string(i); }
  // Index of "node-<i>", or -1.
  int IndexOf(const std::string& node_id) const;

  // Faults. Each is a no-op (returning false) when the node is not in a state it applies to.
  bool Crash(int i);                 // SIGKILL
  bool Stop(int i);                  // SIGTERM, graceful (a leader demotes), SIGKILL after 5 s
  Status Restart(int i, Duration timeout);  // start again with the same config; waits until it answers
  bool Pause(int i);                 // SIGSTOP
  bool Resume(int i);                // SIGCONT
  // Sends LeaderDemote to the admin API; the node stays up.
  Status Demote(int i);
  void KillAll();

  // Logs of every node, for messages.
  std::vector<std::string> LogPaths() const;
  // Nodes that exited on their own (not by a fault): "node-1 exited with 1 (log: ...)".
  std::vector<std::string> UnexpectedExits();

 private:
  struct Node {
    int meta_port = 0;
    int admin_port = 0;
    std::string config_path;
    std::unique_ptr<LinkProxy> meta_front;   // with client_proxies
    std::unique_ptr<LinkProxy> admin_front;
    std::unique_ptr<ChildProcess> child;
    std::atomic<NodeState> state{NodeState::kDown};
  };
  Status WaitAnswers(int i, Duration timeout);
  Status StartProcess(int i);

  NodeClusterSpec spec_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

}  // namespace kvchaos::harness::real
