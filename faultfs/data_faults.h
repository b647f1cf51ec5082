// Pure helpers that turn a hit of a data rule into concrete damage: which bits to flip, how many
// bytes a short or torn call keeps, where a misdirected write lands. All draws come from the
// call's own Rng stream, so the same (seed, rule, match count) always gives the same damage.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/common/rng.h"
#include "faultfs/rule.h"

namespace kvchaos::faultfs {

// Flips bits of `data` (rule.bits of them, or each with probability rule.bit_rate); returns the
// flipped bit indices relative to data[0], in the order flipped. Empty data flips nothing.
std::vector<uint64_t> FlipBits(std::span<uint8_t> data, const Rule& rule, Rng& rng);

// Bytes a short read/write or a torn write keeps: rule.bytes when given, else drawn in
// [0, size) (at least 1 for a torn write, so something reaches the disk). Always < size when
// size > 0.
uint64_t KeptLength(const Rule& rule, uint64_t size, Rng& rng);

// Offset a misdirected write of `size` bytes at `offset` goes to: offset + shift (shift 0 means
// one size further); a negative result is mirrored to stay inside the file's address space.
uint64_t MisdirectedOffset(const Rule& rule, uint64_t offset, uint64_t size);

}  // namespace kvchaos::faultfs
