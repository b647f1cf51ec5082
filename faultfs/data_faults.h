// Pure helpers that turn a hit of a data rule into concrete damage: which bits to flip, how many
// bytes a short or torn call keeps, where a misdirected write lands. All draws come from the
// call's own Rng stream, so the same (seed, rule, match count) always gives the same damage.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/rng.h"
#include "faultfs/rule.h"
#include "faultfs/rule_engine.h"

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

// What a read hit does to the bytes a read got (`data`, already read): flips bits in place
// (flip_read_bits) or keeps a prefix (short_read). Other actions change nothing here.
struct ReadDamage {
  uint64_t returned = 0;  // bytes the caller gets
  nlohmann::json detail;  // for the fault log; null when the hit changed nothing
};
ReadDamage DamageRead(Hit& hit, std::span<uint8_t> data);

// What a write hit does before the write reaches the file: `data` (the caller's bytes, a copy) may
// be corrupted in place; only the first `to_write` bytes are written, at `target`; the caller is
// told `reply` bytes were written, or gets `err` when it is not 0. `direct` (an O_DIRECT source)
// keeps short and torn prefixes whole 4 KiB blocks. A bad_range hit marks [offset, +bad_length)
// after the write (the caller's job: it owns the bad ranges).
struct WriteDamage {
  uint64_t to_write = 0;
  uint64_t target = 0;
  uint64_t reply = 0;
  int err = 0;
  uint64_t bad_length = 0;  // > 0: mark this much as bad
  nlohmann::json detail;
};
WriteDamage DamageWrite(Hit& hit, std::span<uint8_t> data, uint64_t offset, bool direct);

}  // namespace kvchaos::faultfs
