// Units in config files and on the command line: durations ("250ms", "10s", "10m", "1h", a bare
// number is milliseconds) and byte sizes in binary units ("4096", "4KiB" or "4K" = 4096, "4MiB"
// or "4M", "1GiB" or "1G"). Decimal suffixes ("4KB", "4MB", "1GB") are refused as ambiguous: beside
// MiB a reader takes 4MB for 4 MiB, and 4,000,000 bytes is not even a multiple of a 4 KiB page;
// write 4MiB, or the number of bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos {

// The largest duration a config key or flag accepts: 100 years is past any real timeout, and
// small enough that a clock reading plus a few of them cannot overflow a Duration.
inline constexpr Duration kMaxDuration = std::chrono::hours(24 * 365 * 100);
// The largest byte size accepted: sizes become file offsets and lengths (off_t, signed 64-bit).
inline constexpr uint64_t kMaxByteSize = static_cast<uint64_t>(INT64_MAX);

Result<Duration> ParseDuration(std::string_view text);
Result<uint64_t> ParseByteSize(std::string_view text);

// "1.5s", "250ms", "40us": a short human form for tables and logs.
std::string FormatDuration(Duration d);
// "4.00 MiB", "512 B".
std::string FormatBytes(uint64_t bytes);

}  // namespace kvchaos
