// Checks of numeric options whose messages say what is wanted in the option's own terms
// ("--blocks: must be at least 1, got 0"), where CLI11's Range and PositiveNumber print their
// bounds as doubles ("Value 0 not in range 0.000000 to 179769313486231570814527423…").
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <string>

namespace kvchaos::cli {

// An integer in lo..hi (hi omitted: no upper bound).
inline CLI::Validator IntegerIn(int64_t lo, int64_t hi = INT64_MAX) {
  const std::string want = hi == INT64_MAX ? "at least " + std::to_string(lo)
                                           : "in " + std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, want](std::string& text) -> std::string {
        int64_t value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size()) return "expected an integer " + want + ", got '" + text + "'";
        if (value < lo || value > hi) return "must be " + want + ", got " + text;
        return "";
      },
      hi == INT64_MAX ? "INT>=" + std::to_string(lo) : "INT in " + std::to_string(lo) + ".." + std::to_string(hi));
}

}  // namespace kvchaos::cli
