#include "sim/trace.h"

#include <cstdio>

#include "core/common/rng.h"

namespace kvchaos::sim {
namespace {

// One multiply per field: plenty to tell two traces apart, cheap enough to run on every event.
inline uint64_t Fold(uint64_t h, uint64_t x) {
  h ^= x;
  h *= 0x9e3779b97f4a7c15ULL;
  return h ^ (h >> 29);
}

}  // namespace

Trace::Trace(uint64_t checkpoint_every)
    : checkpoint_every_(checkpoint_every == 0 ? 1 : checkpoint_every), until_checkpoint_(checkpoint_every_) {}

void Trace::Record(int64_t t_ns, int node, uint64_t thread, std::string_view what, uint64_t what_hash, int64_t a,
                   int64_t b, std::string_view detail, uint64_t detail_hash) {
  uint64_t h = Fold(hash_, static_cast<uint64_t>(t_ns));
  h = Fold(h, (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 32) ^ thread);
  h = Fold(h, what_hash);
  h = Fold(h, static_cast<uint64_t>(a));
  h = Fold(h, static_cast<uint64_t>(b));
  if (!detail.empty()) h = Fold(h, detail_hash);
  hash_ = Mix64(h);  // full avalanche once per event
  const uint64_t index = events_++;
  if (--until_checkpoint_ == 0) {
    checkpoints_.push_back(hash_);
    until_checkpoint_ = checkpoint_every_;
  }
  const bool capture = index >= capture_begin_ && index < capture_end_;
  if (!sink_ && !capture) return;
  std::string who = namer_ ? namer_(node, thread) : ("n" + std::to_string(node) + "/t" + std::to_string(thread));
  std::string line = FormatLine(index, t_ns, who, what, a, b, detail);
  if (sink_) sink_(line);
  if (capture) captured_.push_back(std::move(line));
}

std::string Trace::FormatLine(uint64_t index, int64_t t_ns, std::string_view node_thread, std::string_view what,
                              int64_t a, int64_t b, std::string_view detail) {
  char head[64];
  // Microseconds with the nanosecond remainder: compact and exact.
  std::snprintf(head, sizeof(head), "#%llu %lld.%03lldus ", static_cast<unsigned long long>(index),
                static_cast<long long>(t_ns / 1000), static_cast<long long>(t_ns % 1000));
  std::string line(head);
  line.append(node_thread);
  line.push_back(' ');
  line.append(what);
  if (a != 0 || b != 0) {
    line.append(" ").append(std::to_string(a));
    if (b != 0) line.append(" ").append(std::to_string(b));
  }
  if (!detail.empty()) line.append(" ").append(detail);
  return line;
}

}  // namespace kvchaos::sim
