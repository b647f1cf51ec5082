// Thread helpers: names (visible in /proc/self/task/*/comm, gdb, top and our log lines) and CPU
// affinity. Linux keeps 15 characters of a name; longer names are cut, not rejected.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace kvchaos {

void SetCurrentThreadName(std::string_view name);
// The calling thread's name (cached per thread after the first call).
const std::string& CurrentThreadName();

// Pins the calling thread to `cpus`; threads it starts afterwards inherit the set.
Status SetCurrentThreadAffinity(const std::vector<int>& cpus);
// The CPUs the calling thread may run on, ascending.
std::vector<int> CurrentThreadAffinity();

// Parses a Linux CPU list such as "0-3,6"; errors name the bad part.
Result<std::vector<int>> ParseCpuList(std::string_view text);

}  // namespace kvchaos
