// Units in config files and on the command line: durations ("250ms", "10s", "10m", "1h", a bare
// number is milliseconds) and byte sizes ("4096", "4KiB", "4MiB", "1GiB", "4KB" = 4000).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos {

Result<Duration> ParseDuration(std::string_view text);
Result<uint64_t> ParseByteSize(std::string_view text);

// "1.5s", "250ms", "40us": a short human form for tables and logs.
std::string FormatDuration(Duration d);
// "4.00 MiB", "512 B".
std::string FormatBytes(uint64_t bytes);

}  // namespace kvchaos
