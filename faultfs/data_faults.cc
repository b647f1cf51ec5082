// Data damage helpers; see data_faults.h.
#include "faultfs/data_faults.h"

#include <algorithm>
#include <cmath>

namespace kvchaos::faultfs {

std::vector<uint64_t> FlipBits(std::span<uint8_t> data, const Rule& rule, Rng& rng) {
  std::vector<uint64_t> flipped;
  const uint64_t total_bits = static_cast<uint64_t>(data.size()) * 8;
  if (total_bits == 0) return flipped;
  uint64_t count = rule.bits;
  if (rule.bit_rate > 0) {
    const double expected = rule.bit_rate * static_cast<double>(total_bits);
    const double whole = std::floor(expected);
    count = static_cast<uint64_t>(whole) + (rng.Bernoulli(expected - whole) ? 1 : 0);
  }
  // A bound on the work and on the log line; a rate that high is garbage data anyway.
  count = std::min<uint64_t>(count, 4096);
  flipped.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t bit = rng.Uniform(total_bits);
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    flipped.push_back(bit);
  }
  return flipped;
}

uint64_t KeptLength(const Rule& rule, uint64_t size, Rng& rng) {
  if (size == 0) return 0;
  if (rule.bytes) return std::min(*rule.bytes, size - 1);
  if (rule.action == ActionKind::kTornWrite) return size == 1 ? 0 : 1 + rng.Uniform(size - 1);
  return rng.Uniform(size);
}

uint64_t MisdirectedOffset(const Rule& rule, uint64_t offset, uint64_t size) {
  const int64_t shift = rule.shift != 0 ? rule.shift : static_cast<int64_t>(size);
  const int64_t target = static_cast<int64_t>(offset) + shift;
  return static_cast<uint64_t>(target >= 0 ? target : -target);
}

}  // namespace kvchaos::faultfs
