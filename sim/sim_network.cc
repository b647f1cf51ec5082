#include "sim/sim_network.h"

#include <stdexcept>
#include <string>

namespace kvchaos::sim {

SimNetwork::SimNetwork(SimRuntime& runtime, Rng rng) : runtime_(runtime), rng_(rng) {}

LinkParams& SimNetwork::link(int from, int to) {
  if (from < 0 || to < 0 || from == to) {
    throw std::out_of_range("no network link from host " + std::to_string(from) + " to host " + std::to_string(to));
  }
  return links_[{from, to}];
}

void SimNetwork::SetPartitioned(int a, int b, bool partitioned) {
  link(a, b).partitioned = partitioned;
  link(b, a).partitioned = partitioned;
}

void SimNetwork::HealAll() {
  for (auto& [pair, l] : links_) {
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

void SimNetwork::Send(int from, int to, const TraceTag& what, std::function<void()> deliver) {
  const LinkParams& l = link(from, to);
  ++counters_.sent;
  if (l.partitioned || (l.loss > 0 && rng_.Bernoulli(l.loss))) {
    ++counters_.dropped;
    runtime_.trace().Event(runtime_.true_now(), from, 0, kDropTag, to, 0, &what);
    return;
  }
  const int64_t latency = Latency(l);
  runtime_.trace().Event(runtime_.true_now(), from, 0, kSendTag, to, latency, &what);
  if (l.duplicate > 0 && rng_.Bernoulli(l.duplicate)) {
    ++counters_.duplicated;
    const int64_t second = latency + Latency(l);
    runtime_.At(runtime_.true_now() + second, deliver);
  }
  runtime_.At(runtime_.true_now() + latency, std::move(deliver));
}

}  // namespace kvchaos::sim
