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

ReadDamage DamageRead(Hit& hit, std::span<uint8_t> data) {
  const Rule& rule = hit.state->rule;
  ReadDamage d{data.size(), nullptr};
  if (rule.action == ActionKind::kFlipReadBits) {
    d.detail = {{"returned", data.size()}, {"bits", FlipBits(data, rule, hit.rng)}};
  } else if (rule.action == ActionKind::kShortRead) {
    d.returned = KeptLength(rule, data.size(), hit.rng);
    d.detail = {{"returned", d.returned}, {"available", data.size()}};
  }
  return d;
}

WriteDamage DamageWrite(Hit& hit, std::span<uint8_t> data, uint64_t offset, bool direct) {
  const Rule& rule = hit.state->rule;
  WriteDamage d{data.size(), offset, data.size(), 0, 0, nullptr};
  switch (rule.action) {
    case ActionKind::kCorruptWrite:
      d.detail = {{"bits", FlipBits(data, rule, hit.rng)}};
      break;
    case ActionKind::kShortWrite:
    case ActionKind::kTornWrite: {
      uint64_t kept = KeptLength(rule, data.size(), hit.rng);
      if (direct) kept &= ~uint64_t{4095};  // an O_DIRECT source takes whole blocks only
      d.to_write = kept;
      if (rule.action == ActionKind::kShortWrite) {
        d.reply = kept;
        d.detail = {{"written", kept}};
      } else {
        d.err = rule.err;
        d.detail = {{"written", kept}, {"errno", ErrnoName(rule.err)}};
      }
      break;
    }
    case ActionKind::kLostWrite:
      d.to_write = 0;
      d.detail = {{"written", 0}};
      break;
    case ActionKind::kMisdirectedWrite:
      d.target = MisdirectedOffset(rule, offset, data.size());
      d.detail = {{"written_at", d.target}};
      break;
    case ActionKind::kBadRange:
      d.bad_length = rule.length ? rule.length : data.size();
      d.detail = {{"bad_length", d.bad_length}};
      break;
    default:
      break;
  }
  return d;
}

}  // namespace kvchaos::faultfs
