// Batch verification of block checksums: which blocks of a batch read back differently from what
// was written, and at which stage of the path the difference was seen.
//
// Every block is compared on its own. Upstream first compared one XOR aggregate (misses block
// swaps), then an aggregate with odd multipliers (2i+1)*phi (misses two entries whose bit 63 both
// flip: an odd multiplier keeps a bit-63 flip in bit 63 and two such flips cancel in the XOR).
// Any linear aggregate has such blind spots, so there is no aggregate fast path here; the compare
// is written so the compiler vectorises it, which keeps 4096 blocks well under 2 us.
//
// Presence flags: 0 is a legal checksum, so "no checksum" is a separate flag. A block is checked
// only when both its expected and its actual checksum are present; an empty flag span means "all
// present".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace kvchaos::integrity {

// Where on the path a checksum was compared (numbers as upstream's stage tag).
enum class VerifyStage : int32_t {
  kUnspecified = 0,
  kWriteInput = 1,     // the data handed to Save against a checksum the caller supplied
  kMetaRoundTrip = 2,  // checksums sent to the meta service against what it returned
  kReadOutput = 3,     // data returned by Load against the checksums stored in meta
};

std::string_view VerifyStageName(VerifyStage stage);

struct VerifyResult {
  VerifyStage stage = VerifyStage::kUnspecified;
  std::vector<size_t> faulty;  // indices of blocks whose checksums differ, ascending
  size_t checked = 0;          // blocks compared (both checksums present)
  bool ok() const { return faulty.empty(); }
};

// Compares expected[i] with actual[i] for every i where both are present. InvalidArgument when
// the spans' lengths disagree (a caller bug, never treated as "all fine").
Result<VerifyResult> VerifyBatchChecksums(std::span<const int64_t> expected, std::span<const int64_t> actual,
                                          VerifyStage stage, std::span<const uint8_t> expected_present = {},
                                          std::span<const uint8_t> actual_present = {});

// KVCM_CHECKSUM_STRICT_MODE is accepted for compatibility: per-block compare is the only mode, so
// "1" (and "0" or unset) are fine; any other value is an InvalidConfig naming the variable.
inline constexpr const char* kStrictModeEnv = "KVCM_CHECKSUM_STRICT_MODE";
Status CheckStrictModeEnv();

}  // namespace kvchaos::integrity
