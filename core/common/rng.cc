#include "core/common/rng.h"

#include <cmath>

namespace kvchaos {
namespace {

__extension__ typedef unsigned __int128 Uint128;

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t HashName(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

Rng::Rng(uint64_t seed) : seed_(seed) {
  uint64_t x = seed;
  for (auto& word : state_) {
    x += 0x9e3779b97f4a7c15ULL;
    word = Mix64(x);
  }
}

Rng Rng::Split(std::string_view name) const { return Rng(Mix64(seed_ ^ Mix64(HashName(name)))); }

Rng Rng::Split(uint64_t index) const { return Rng(Mix64(seed_ + Mix64(index ^ 0x5bd1e9955bd1e995ULL))); }

uint64_t Rng::NextU64() {
  const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = Rotl(state_[3], 45);
  return result;
}

uint64_t Rng::Uniform(uint64_t bound) {
  // Lemire's multiply-shift with rejection of the biased low range.
  Uint128 m = static_cast<Uint128>(NextU64()) * bound;
  auto low = static_cast<uint64_t>(m);
  if (low < bound) {
    const uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      m = static_cast<Uint128>(NextU64()) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

int64_t Rng::UniformInt(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == UINT64_MAX) return static_cast<int64_t>(NextU64());
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + Uniform(span + 1));
}

double Rng::UniformDouble() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

double Rng::UniformReal(double lo, double hi) { return lo + (hi - lo) * UniformDouble(); }

double Rng::Exponential(double mean) {
  // 1 - u is in (0, 1], so the log is finite.
  return -mean * std::log(1.0 - UniformDouble());
}

bool Rng::Bernoulli(double p) {
  if (p <= 0.0) return false;
  if (p >= 1.0) return true;
  return UniformDouble() < p;
}

}  // namespace kvchaos
