#include "sim/sim_network.h"

#include <stdexcept>
#include <string>

namespace kvchaos::sim {

SimNetwork::SimNetwork(SimRuntime& runtime, Rng rng, int nodes)
    : runtime_(runtime), rng_(rng), links_(static_cast<size_t>(nodes) * 2) {}

LinkParams& SimNetwork::link(int node, Direction direction) {
  const size_t index = static_cast<size_t>(node) * 2 + static_cast<size_t>(direction);
  if (node < 0 || index >= links_.size()) throw std::out_of_range("no network link for node " + std::to_string(node));
  return links_[index];
}

void SimNetwork::HealAll() {
  for (LinkParams& l : links_) {
    l.loss = 0;
    l.duplicate = 0;
    l.extra_ns = 0;
    l.partitioned = false;
  }
}

int64_t SimNetwork::Latency(const LinkParams& l) {
  int64_t ns = l.base_ns + l.extra_ns;
  if (l.jitter_ns > 0) ns += static_cast<int64_t>(rng_.Uniform(static_cast<uint64_t>(l.jitter_ns) + 1));
  if (l.tail_probability > 0 && rng_.Bernoulli(l.tail_probability) && l.tail_ns > 0) {
    ns += static_cast<int64_t>(rng_.Uniform(static_cast<uint64_t>(l.tail_ns) + 1));
  }
  return ns;
}

namespace {
constexpr TraceTag kDropTag("net-drop");
constexpr TraceTag kSendTag("net-send");
}  // namespace

void SimNetwork::Send(int node, Direction direction, const TraceTag& what, std::function<void()> deliver) {
  LinkParams& l = link(node, direction);
  ++counters_.sent;
  const int64_t dir = static_cast<int64_t>(direction);
  if (l.partitioned || (l.loss > 0 && rng_.Bernoulli(l.loss))) {
    ++counters_.dropped;
    runtime_.trace().Event(runtime_.true_now(), node, 0, kDropTag, dir, 0, &what);
    return;
  }
  const int64_t latency = Latency(l);
  runtime_.trace().Event(runtime_.true_now(), node, 0, kSendTag, dir, latency, &what);
  if (l.duplicate > 0 && rng_.Bernoulli(l.duplicate)) {
    ++counters_.duplicated;
    const int64_t second = latency + Latency(l);
    runtime_.At(runtime_.true_now() + second, deliver);
  }
  runtime_.At(runtime_.true_now() + latency, std::move(deliver));
}

int64_t SimNetwork::TypicalRttNs(int node) const {
  const LinkParams& a = links_.at(static_cast<size_t>(node) * 2);
  const LinkParams& b = links_.at(static_cast<size_t>(node) * 2 + 1);
  return a.base_ns + a.jitter_ns / 2 + b.base_ns + b.jitter_ns / 2;
}

}  // namespace kvchaos::sim
