#include "core/common/metrics.h"

#include <algorithm>
#include <cmath>
#include <charconv>

#include "core/common/assert.h"

namespace kvchaos {
namespace {

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Label values and help text escape backslash and newline; label values also the double quote.
void AppendEscaped(std::string& out, std::string_view text, bool quote) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

std::string Escape(std::string_view text, bool quote) {
  std::string out;
  AppendEscaped(out, text, quote);
  return out;
}

// Built in place: every counted call renders its labels (the node counts each coordination call).
std::string RenderLabels(const MetricLabels& labels) {
  std::string out;
  for (const auto& [key, value] : labels) {
    KVCHAOS_ASSERT(ValidName(key) && key.find(':') == std::string::npos, "metric label name '" + key + "'");
    if (!out.empty()) out += ',';
    out += key;
    out += "=\"";
    AppendEscaped(out, value, true);
    out += '"';
  }
  return out;
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  // The shortest text that reads back as the same double (integers without a fraction).
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string Braced(const std::string& labels, const std::string& extra = "") {
  std::string inner = labels;
  if (!extra.empty()) inner += (inner.empty() ? "" : ",") + extra;
  return inner.empty() ? "" : "{" + inner + "}";
}

template <typename T>
T& Slot(std::vector<std::pair<std::string, T>>& slots, const std::string& key) {
  for (auto& [k, v] : slots) {
    if (k == key) return v;
  }
  return slots.emplace_back(key, T{}).second;
}

constexpr double kLatencyBucketsSeconds[] = {0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000};

}  // namespace

std::span<const double> LatencyBucketsSeconds() { return kLatencyBucketsSeconds; }

MetricsRegistry::Family& MetricsRegistry::FamilyOf(std::string_view name, std::string_view help, Type type) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    // Checked once, when the family is made: every later call names a family that passed.
    KVCHAOS_ASSERT(ValidName(name), "metric name '" + std::string(name) + "'");
    it = families_.emplace(std::string(name), Family{std::string(help), type, {}, {}}).first;
  }
  KVCHAOS_ASSERT(it->second.type == type, "metric '" + std::string(name) + "' used with two types");
  return it->second;
}

void MetricsRegistry::Add(std::string_view name, std::string_view help, const MetricLabels& labels, double delta) {
  KVCHAOS_ASSERT(delta >= 0, "counter '" + std::string(name) + "' decremented");
  const std::string key = RenderLabels(labels);
  std::lock_guard<std::mutex> lock(mu_);
  Slot(FamilyOf(name, help, Type::kCounter).values, key) += delta;
}

void MetricsRegistry::Set(std::string_view name, std::string_view help, const MetricLabels& labels, double value) {
  const std::string key = RenderLabels(labels);
  std::lock_guard<std::mutex> lock(mu_);
  Slot(FamilyOf(name, help, Type::kGauge).values, key) = value;
}

void MetricsRegistry::Observe(std::string_view name, std::string_view help, const MetricLabels& labels, double value,
                              std::span<const double> bounds) {
  const std::string key = RenderLabels(labels);
  std::lock_guard<std::mutex> lock(mu_);
  Histogram& h = Slot(FamilyOf(name, help, Type::kHistogram).histograms, key);
  if (h.counts.empty()) {
    h.bounds.assign(bounds.begin(), bounds.end());
    h.counts.assign(h.bounds.size() + 1, 0);
  }
  const size_t bucket = static_cast<size_t>(std::lower_bound(h.bounds.begin(), h.bounds.end(), value) - h.bounds.begin());
  ++h.counts[bucket];
  h.sum += value;
  ++h.count;
}

void MetricsRegistry::CopyInto(MetricsRegistry& out) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::lock_guard<std::mutex> out_lock(out.mu_);
  for (const auto& [name, family] : families_) out.families_[name] = family;
}

std::string MetricsRegistry::Render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    static constexpr const char* kTypeNames[] = {"counter", "gauge", "histogram"};
    out += "# HELP " + name + " " + Escape(f.help, false) + "\n";
    out += "# TYPE " + name + " " + kTypeNames[static_cast<int>(f.type)] + "\n";
    for (const auto& [labels, value] : f.values) out += name + Braced(labels) + " " + Number(value) + "\n";
    for (const auto& [labels, h] : f.histograms) {
      uint64_t cumulative = 0;
      for (size_t i = 0; i <= h.bounds.size(); ++i) {
        cumulative += h.counts[i];
        const std::string le = i < h.bounds.size() ? Number(h.bounds[i]) : "+Inf";
        out += name + "_bucket" + Braced(labels, "le=\"" + le + "\"") + " " + Number(static_cast<double>(cumulative)) + "\n";
      }
      out += name + "_sum" + Braced(labels) + " " + Number(h.sum) + "\n";
      out += name + "_count" + Braced(labels) + " " + Number(static_cast<double>(h.count)) + "\n";
    }
  }
  return out;
}

}  // namespace kvchaos
