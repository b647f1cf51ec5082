// SimNetwork: the links between the hosts of a simulated world (a host is a SimRuntime node: a
// metadata node, the coordination backend, a client), one per direction and pair, each with its
// own latency distribution (base + uniform jitter + a rare tail), loss, duplication, extra delay
// (a congested link) and a partition switch. Loss on the reply direction alone gives the "applied
// but the reply was lost" ambiguity. Every choice comes from the network's own Rng stream, in the
// order messages are sent, so a seed replays the same deliveries.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include "core/common/rng.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

struct LinkParams {
  int64_t base_ns = 150'000;
  int64_t jitter_ns = 100'000;  // uniform in [0, jitter]
  double tail_probability = 0.01;
  int64_t tail_ns = 5'000'000;  // a tail message takes up to this much more
  double loss = 0.0;
  double duplicate = 0.0;
  int64_t extra_ns = 0;  // added to every message (a congested or slow path)
  bool partitioned = false;
};

struct NetworkCounters {
  uint64_t sent = 0;
  uint64_t dropped = 0;
  uint64_t duplicated = 0;
};

class SimNetwork {
 public:
  SimNetwork(SimRuntime& runtime, Rng rng);

  // The link from host `from` to host `to` (made with the defaults on first use).
  LinkParams& link(int from, int to);
  // Cuts (or heals) both directions between two hosts.
  void SetPartitioned(int a, int b, bool partitioned);
  // Restores every link's faults (loss, duplication, extra delay, partition) to none.
  void HealAll();
  // Sends a message from `from` to `to`; `deliver` runs on the scheduler context when it arrives,
  // never if it is lost, twice if duplicated.
  void Send(int from, int to, const TraceTag& what, std::function<void()> deliver);

  const NetworkCounters& counters() const { return counters_; }

 private:
  int64_t Latency(const LinkParams& link);

  SimRuntime& runtime_;
  Rng rng_;
  std::map<std::pair<int, int>, LinkParams> links_;  // ordered: HealAll walks it the same way every run
  NetworkCounters counters_;
};

}  // namespace kvchaos::sim
