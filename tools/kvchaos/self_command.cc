// SelfCommand (see self_command.h).
#include "tools/kvchaos/self_command.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace kvchaos::cli {

std::string SelfCommand() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "kvchaos";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / "kvchaos";
    if (!std::filesystem::exists(candidate, ec)) continue;
    // The first kvchaos on PATH is the one `kvchaos` runs: it must be this very binary.
    return std::filesystem::equivalent(candidate, self, ec) ? "kvchaos" : self.string();
  }
  return self.string();
}

}  // namespace kvchaos::cli
