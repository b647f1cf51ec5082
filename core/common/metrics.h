// MetricsRegistry: counters, gauges and histograms with labels, rendered in the Prometheus text
// exposition format (0.0.4), so a node serves them at /metrics and an embedding service renders
// the store's and client's next to its own (store/store_metrics.h, client/client_metrics.h).
//
// Families are kept by name and rendered in name order, samples by their labels in the order
// given; `promtool check metrics` accepts the output (a test runs it). Values that are read at
// render time (a store's health, an elector's state) are written into a registry then and there
// with Set; what accumulates (request counts, latencies) lives in a registry the component keeps,
// and CopyInto() copies it to add the rest before rendering. Thread-safe: each call takes a short
// std::mutex of its own (a leaf lock around a map update, never held across a wait, a call or a
// Runtime operation, so under the simulator it never blocks a simulated thread, like
// TransferClient's mismatch counts).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvchaos {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // A counter (name ends in _total): grows by `delta` (>= 0).
  void Add(std::string_view name, std::string_view help, const MetricLabels& labels, double delta = 1);
  // A gauge: the value now.
  void Set(std::string_view name, std::string_view help, const MetricLabels& labels, double value);
  // A histogram with these ascending upper bounds (+Inf is implied); its first Observe fixes them.
  void Observe(std::string_view name, std::string_view help, const MetricLabels& labels, double value,
               std::span<const double> bounds);

  // A copy of every family and sample, to add values to before rendering.
  void CopyInto(MetricsRegistry& out) const;
  std::string Render() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Histogram {
    std::vector<double> bounds;
    std::vector<uint64_t> counts;  // per bound, not cumulative; the last is +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  struct Family {
    std::string help;
    Type type = Type::kGauge;
    std::vector<std::pair<std::string, double>> values;         // rendered labels -> value
    std::vector<std::pair<std::string, Histogram>> histograms;  // rendered labels -> histogram
  };
  // The family of `name`, created on first use; a name used with two types is a bug (asserted).
  Family& FamilyOf(std::string_view name, std::string_view help, Type type);

  mutable std::mutex mu_;
  std::map<std::string, Family, std::less<>> families_;
};

// Buckets of request latencies in seconds (0.5 ms to 10 s). Metric names follow Prometheus's
// conventions rather than this project's `_ms` suffix: base units (seconds), counters in `_total`
// (promtool check metrics lints both).
std::span<const double> LatencyBucketsSeconds();

}  // namespace kvchaos
