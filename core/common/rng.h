// Rng: the only source of randomness in kvchaos (the determinism contract of DESIGN.md).
// xoshiro256** seeded through SplitMix64, with its own distributions, so a seed gives the same
// stream on every compiler and standard library (std:: distributions do not promise that).
// Split(name) derives an independent stream from this one's seed and a name, without consuming
// from this stream, so components get the same numbers whatever order they are created in.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace kvchaos {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  // An independent stream named `name`, a pure function of (this stream's seed, name).
  Rng Split(std::string_view name) const;
  // An independent stream numbered `index`, a pure function of (this stream's seed, index).
  Rng Split(uint64_t index) const;

  uint64_t seed() const { return seed_; }

  uint64_t NextU64();
  // Uniform in [0, bound); bound must be > 0. Unbiased (rejection sampling).
  uint64_t Uniform(uint64_t bound);
  // Uniform in [lo, hi], both inclusive.
  int64_t UniformInt(int64_t lo, int64_t hi);
  // Uniform in [0, 1) with 53 random bits.
  double UniformDouble();
  // Uniform in [lo, hi).
  double UniformReal(double lo, double hi);
  // Exponentially distributed with the given mean (> 0).
  double Exponential(double mean);
  // True with probability p (p <= 0: never, p >= 1: always).
  bool Bernoulli(double p);

 private:
  uint64_t seed_;
  std::array<uint64_t, 4> state_;
};

// 64-bit FNV-1a of a string, used to turn stream names into numbers.
uint64_t HashName(std::string_view name);
// SplitMix64 finaliser: a strong 64-bit mix (inline: hot loops fill buffers with it).
constexpr uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace kvchaos
