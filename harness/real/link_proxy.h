// LinkProxy: a small TCP proxy on loopback in front of one server, so real mode can cut and
// degrade one path: a `kvchaos node`'s link to the coordination redis-server (the node's config
// points at the proxy), or the clients' links to a node's HTTP ports (the node advertises the
// proxy's port). One thread (kvc_px_<name>) relays every connection both ways. "Client" is the side
// that connects (the node calling Redis; the workload calling a node), "server" the other.
//
// A partition blocks one or both directions: bytes in a blocked direction are not read (nor held
// bytes written), so they wait in kernel buffers as on a dead link under TCP — the client's calls
// time out, it closes the connection, and the proxy closes the server side with it. Bytes
// are never dropped from the middle of a stream (that would corrupt RESP, which no real network
// does). A connection made while partitioned is accepted (the kernel completes the handshake
// anyway) and its bytes wait like the others. Heal unblocks everything.
//
// A coordination outage severs the connections instead (Sever): every byte in flight or sent while
// it lasts is lost both ways, and each connection that was open meanwhile stays dead for good
// (what it carries afterwards is discarded too, until a side closes it) — so a client's calls in it
// get no answer and time out, as when requests and replies are lost (the simulator's outage), and
// only connections opened after the outage work again. No byte is ever dropped from the middle of a
// stream that goes on carrying data.
//
// A degraded link (the `network` fault) holds each direction's bytes for a delay (plus a uniform
// jitter) before passing them on; with a chance of loss, what one read brought waits a further
// retransmission timeout (200 ms, Linux's minimum; again with the same chance, doubling each
// time): loss as a TCP peer sees it, late rather than missing. A bandwidth cap is the link's, shared
// by all its connections: each read's bytes go out after those read before them, on any
// connection, have gone out at that rate. Order is always kept.
//
// A reset partition (Reset) closes every connection with a TCP reset, both sides, and resets each
// new one as soon as it is accepted while it lasts: the client's calls fail at once with
// "connection reset" instead of waiting out their timeout.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos::harness::real {

// How one direction of a degraded link behaves.
struct LinkQuality {
  Duration delay{0};
  Duration jitter{0};  // a further uniform [0, jitter] per read
  double loss = 0;     // chance that a read's bytes wait one more retransmission timeout
  uint64_t bandwidth = 0;  // bytes per second; 0: no cap
  bool degraded() const { return delay > Duration::zero() || jitter > Duration::zero() || loss > 0 || bandwidth > 0; }
};

class LinkProxy {
 public:
  LinkProxy(std::string name, int upstream_port);
  ~LinkProxy();  // Stop()

  // Binds a free loopback port and starts relaying.
  Status Start();
  void Stop();

  // to_server: client -> server; to_client: server -> client. Each change takes effect at once
  // (the relay thread is woken), so a fault starts and ends when the timeline says.
  void Block(bool to_server, bool to_client);
  // Partitions and degradations both end.
  void Heal();
  // `seed` drives the losses (kvchaos::Rng), so a seed's run draws the same ones.
  void Degrade(LinkQuality to_server, LinkQuality to_client, uint64_t seed);
  void Sever(bool on);
  void Reset(bool on);
  int port() const { return port_; }

 private:
  void Loop();
  void Wake();
  const std::string name_;
  const int upstream_port_;
  int listen_fd_ = -1;
  int wake_read_ = -1;  // a pipe whose write end Block/Sever poke, read end in the relay's poll
  int wake_write_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> block_out_{false};
  std::atomic<bool> block_in_{false};
  std::atomic<bool> sever_{false};
  std::atomic<bool> reset_{false};
  std::mutex quality_mu_;
  LinkQuality quality_out_;  // guarded by quality_mu_
  LinkQuality quality_in_;   // guarded by quality_mu_
  uint64_t quality_seed_ = 0;
  std::atomic<uint64_t> quality_version_{0};  // bumped by each Degrade/Heal: the relay re-seeds its Rng
  std::thread thread_;
};

}  // namespace kvchaos::harness::real
