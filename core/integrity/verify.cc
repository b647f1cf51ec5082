// Per-block batch compare (see verify.h for why there is no aggregate fast path).
#include "core/integrity/verify.h"

#include <cstdlib>
#include <string>

namespace kvchaos::integrity {
namespace {

// Blocks per chunk: a chunk is first scanned branch-free (vectorisable); only a chunk with a
// difference is walked again to collect indices.
constexpr size_t kChunk = 64;

constexpr uint8_t kAllPresent[kChunk] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                         1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                         1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

inline uint64_t Present(const uint8_t* flags, size_t i) { return flags == nullptr ? 1 : (flags[i] != 0); }

void CollectFaults(const int64_t* e, const int64_t* a, const uint8_t* ep, const uint8_t* ap, size_t begin, size_t end,
                   std::vector<size_t>* faulty) {
  for (size_t i = begin; i < end; ++i) {
    if ((Present(ep, i) & Present(ap, i)) != 0 && e[i] != a[i]) faulty->push_back(i);
  }
}

}  // namespace

std::string_view VerifyStageName(VerifyStage stage) {
  switch (stage) {
    case VerifyStage::kUnspecified:
      return "UNSPECIFIED";
    case VerifyStage::kWriteInput:
      return "WRITE_INPUT";
    case VerifyStage::kMetaRoundTrip:
      return "META_ROUND_TRIP";
    case VerifyStage::kReadOutput:
      return "READ_OUTPUT";
  }
  return "UNKNOWN";
}

Result<VerifyResult> VerifyBatchChecksums(std::span<const int64_t> expected, std::span<const int64_t> actual,
                                          VerifyStage stage, std::span<const uint8_t> expected_present,
                                          std::span<const uint8_t> actual_present) {
  const size_t n = expected.size();
  auto bad_len = [&](std::string_view what, size_t len) {
    return Status::InvalidArgument("VerifyBatchChecksums(" + std::string(VerifyStageName(stage)) + "): " +
                                   std::string(what) + " has " + std::to_string(len) + " entries, expected has " +
                                   std::to_string(n));
  };
  if (actual.size() != n) return bad_len("actual", actual.size());
  if (!expected_present.empty() && expected_present.size() != n) return bad_len("expected_present", expected_present.size());
  if (!actual_present.empty() && actual_present.size() != n) return bad_len("actual_present", actual_present.size());

  VerifyResult result;
  result.stage = stage;
  const int64_t* e = expected.data();
  const int64_t* a = actual.data();
  const uint8_t* ep = expected_present.empty() ? nullptr : expected_present.data();
  const uint8_t* ap = actual_present.empty() ? nullptr : actual_present.data();

  size_t checked = 0;
  size_t base = 0;
  // Full chunks have a compile-time trip count, so the compiler vectorises them even at -O2.
  for (; base + kChunk <= n; base += kChunk) {
    uint64_t any = 0;
    if (ep != nullptr || ap != nullptr) {
      const uint8_t* epc = ep != nullptr ? ep + base : kAllPresent;
      const uint8_t* apc = ap != nullptr ? ap + base : kAllPresent;
      uint64_t on_count = 0;
      for (size_t i = 0; i < kChunk; ++i) {
        const uint64_t on = static_cast<uint64_t>((epc[i] != 0) & (apc[i] != 0));
        on_count += on;
        any |= static_cast<uint64_t>(e[base + i] ^ a[base + i]) & (0 - on);
      }
      checked += on_count;
    } else {
      for (size_t i = 0; i < kChunk; ++i) any |= static_cast<uint64_t>(e[base + i] ^ a[base + i]);
      checked += kChunk;
    }
    if (any != 0) CollectFaults(e, a, ep, ap, base, base + kChunk, &result.faulty);
  }
  if (base < n) {
    for (size_t i = base; i < n; ++i) checked += Present(ep, i) & Present(ap, i);
    CollectFaults(e, a, ep, ap, base, n, &result.faulty);
  }
  result.checked = checked;
  return result;
}

Status CheckStrictModeEnv() {
  const char* raw = std::getenv(kStrictModeEnv);
  if (raw == nullptr) return Status::Ok();
  const std::string_view v(raw);
  if (v.empty() || v == "0" || v == "1") return Status::Ok();
  return Status::InvalidConfig(std::string("environment variable ") + kStrictModeEnv + "='" + std::string(v) +
                               "': must be 0 or 1 (per-block verification is the only mode; 1 is accepted for "
                               "compatibility)");
}

}  // namespace kvchaos::integrity
