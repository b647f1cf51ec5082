// The LD_PRELOAD libraries real mode starts `kvchaos node` processes under (the clock preload,
// the connect preload): where to find one, and the environment that loads one or several of them.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"

namespace kvchaos::harness::real {

struct PreloadLibrary {
  const char* file_name;     // "libkvchaos_clock_preload.so"
  const char* override_env;  // a variable naming the file, read first: "KVCHAOS_CLOCK_PRELOAD"
  const char* target;        // its CMake target, for the message
  const char* needed_for;    // "clock faults in real mode"
};

// $override_env when set (it must be readable), else beside the running binary (the build tree),
// else lib/kvchaos/ beside its bin/ (an install), else where this build put it (for test binaries
// elsewhere in the build tree).
Result<std::string> FindPreloadLibrary(const PreloadLibrary& lib);

// Adds `library` to the LD_PRELOAD entry of `env` (KEY=VALUE entries a child is started with),
// creating it from the runner's own LD_PRELOAD when absent, and lets a sanitizer's runtime load
// after it (ASAN_OPTIONS verify_asan_link_order=0, added once).
void AddPreload(std::vector<std::string>& env, const std::string& library);

}  // namespace kvchaos::harness::real
