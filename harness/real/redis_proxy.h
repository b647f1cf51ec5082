// RedisProxy: a small TCP proxy on loopback between one `kvchaos node` and the coordination
// redis-server, so real mode can partition that node from Redis. The node's config points at the
// proxy's port; one thread (kvc_px_<node>) relays every connection of that node both ways.
//
// A partition blocks one or both directions: bytes in a blocked direction are not read (nor held
// bytes written), so they wait in kernel buffers as on a dead link under TCP — the node's Redis
// calls time out, it closes the connection, and the proxy closes the upstream side with it. Bytes
// are never dropped from the middle of a stream (that would corrupt RESP, which no real network
// does). A connection made while partitioned is accepted (the kernel completes the handshake
// anyway) and its bytes wait like the others. Heal unblocks everything.
//
// A coordination outage severs the connections instead (Sever): every byte in flight or sent while
// it lasts is lost both ways, and each connection that was open meanwhile stays dead for good
// (what it carries afterwards is discarded too, until a side closes it) — so a node's calls in it
// get no answer and time out, as when requests and replies are lost (the simulator's outage), and
// only connections opened after the outage work again. No byte is ever dropped from the middle of a
// stream that goes on carrying data.
//
// A degraded link (the `network` fault) holds each direction's bytes for a delay before passing
// them on; with a chance of loss, what one read brought waits a further retransmission timeout
// (200 ms, Linux's minimum; again with the same chance, doubling each time): loss as a TCP peer
// sees it, late rather than missing. Order is always kept.
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
  double loss = 0;  // chance that a read's bytes wait one more retransmission timeout
  bool degraded() const { return delay > Duration::zero() || loss > 0; }
};

class RedisProxy {
 public:
  RedisProxy(std::string name, int upstream_port);
  ~RedisProxy();  // Stop()

  // Binds a free loopback port and starts relaying.
  Status Start();
  void Stop();

  // outbound: node -> Redis; inbound: Redis -> node. Each change takes effect at once (the relay
  // thread is woken), so a fault starts and ends when the timeline says.
  void Block(bool outbound, bool inbound);
  // Partitions and degradations both end.
  void Heal();
  // `seed` drives the losses (kvchaos::Rng), so a seed's run draws the same ones.
  void Degrade(LinkQuality outbound, LinkQuality inbound, uint64_t seed);
  void Sever(bool on);
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
  std::mutex quality_mu_;
  LinkQuality quality_out_;  // guarded by quality_mu_
  LinkQuality quality_in_;   // guarded by quality_mu_
  uint64_t quality_seed_ = 0;
  std::atomic<uint64_t> quality_version_{0};  // bumped by each Degrade/Heal: the relay re-seeds its Rng
  std::thread thread_;
};

}  // namespace kvchaos::harness::real
