#include "core/common/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

namespace kvchaos {
namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};

// Splits "12.5ms" into 12.5 and "ms"; false when there is no leading number.
bool SplitNumber(std::string_view text, double* number, std::string_view* suffix) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, *number);
  if (ec != std::errc() || ptr != text.data() + i) return false;
  *suffix = text.substr(i);
  while (!suffix->empty() && suffix->front() == ' ') suffix->remove_prefix(1);
  return true;
}

template <size_t N>
bool Scale(std::string_view suffix, const std::array<Unit, N>& units, double* factor) {
  for (const Unit& unit : units) {
    if (suffix == unit.suffix) {
      *factor = unit.factor;
      return true;
    }
  }
  return false;
}

}  // namespace

Result<Duration> ParseDuration(std::string_view text) {
  static constexpr std::array<Unit, 8> kUnits{{{"", 1e6},
                                               {"ns", 1},
                                               {"us", 1e3},
                                               {"ms", 1e6},
                                               {"s", 1e9},
                                               {"m", 60e9},
                                               {"min", 60e9},
                                               {"h", 3600e9}}};
  double number = 0;
  std::string_view suffix;
  double factor = 0;
  if (!SplitNumber(text, &number, &suffix) || !Scale(suffix, kUnits, &factor)) {
    return Status::InvalidArgument("'" + std::string(text) +
                                   "' is not a duration (use a number with ns, us, ms, s, m or h; bare = ms)");
  }
  const double ns = number * factor;
  if (ns > static_cast<double>(kMaxDuration.count())) {
    return Status::InvalidArgument("duration '" + std::string(text) + "' is too large (at most 100 years)");
  }
  return Duration(static_cast<int64_t>(std::llround(ns)));
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  static constexpr std::array<Unit, 8> kUnits{{{"", 1},
                                               {"B", 1},
                                               {"K", 1024},
                                               {"KiB", 1024},
                                               {"M", 1024.0 * 1024},
                                               {"MiB", 1024.0 * 1024},
                                               {"G", 1024.0 * 1024 * 1024},
                                               {"GiB", 1024.0 * 1024 * 1024}}};
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kDecimal{
      {{"KB", "KiB"}, {"MB", "MiB"}, {"GB", "GiB"}}};
  double number = 0;
  std::string_view suffix;
  double factor = 0;
  if (SplitNumber(text, &number, &suffix)) {
    for (const auto& [decimal, binary] : kDecimal) {
      if (suffix != decimal) continue;
      const std::string_view digits = text.substr(0, text.size() - suffix.size());
      std::string binary_text(digits);
      while (!binary_text.empty() && binary_text.back() == ' ') binary_text.pop_back();
      binary_text += binary;
      Result<uint64_t> binary_bytes = ParseByteSize(binary_text);
      return Status::InvalidArgument("'" + std::string(text) + "' is ambiguous: write " + binary_text +
                                     (binary_bytes.ok() ? " (" + std::to_string(*binary_bytes) + " bytes)" : "") +
                                     " for binary units, or the number of bytes for decimal ones");
    }
  }
  if (!SplitNumber(text, &number, &suffix) || !Scale(suffix, kUnits, &factor)) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not a byte size (e.g. 4096, 4KiB, 4MiB, 1GiB)");
  }
  const std::string too_large = "byte size '" + std::string(text) + "' is too large (at most " +
                                std::to_string(kMaxByteSize) + " bytes)";
  const std::string_view digits = text.substr(0, text.find_first_not_of("0123456789."));
  if (digits.find('.') == std::string_view::npos) {
    // Integers exactly: a double would round sizes past 2^53 without a word.
    uint64_t count = 0;
    uint64_t bytes = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (ec != std::errc() || __builtin_mul_overflow(count, static_cast<uint64_t>(factor), &bytes) ||
        bytes > kMaxByteSize) {
      return Status::InvalidArgument(too_large);
    }
    return bytes;
  }
  const double bytes = number * factor;
  if (bytes != std::floor(bytes)) {
    return Status::InvalidArgument("byte size '" + std::string(text) + "' is not a whole number of bytes");
  }
  if (bytes >= static_cast<double>(kMaxByteSize)) return Status::InvalidArgument(too_large);
  return static_cast<uint64_t>(bytes);
}

std::string FormatDuration(Duration d) {
  const double ns = static_cast<double>(d.count());
  char buf[32];
  if (std::abs(ns) >= 1e9) {
    std::snprintf(buf, sizeof(buf), "%.3gs", ns / 1e9);
  } else if (std::abs(ns) >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.3gms", ns / 1e6);
  } else if (std::abs(ns) >= 1e3) {
    std::snprintf(buf, sizeof(buf), "%.3gus", ns / 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%lldns", static_cast<long long>(d.count()));
  }
  return buf;
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr std::array<const char*, 5> kNames{"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < kNames.size()) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0) {
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f %s", value, kNames[unit]);
  }
  return buf;
}

}  // namespace kvchaos
