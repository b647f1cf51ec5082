// Finding real mode's preload libraries and loading them; see preload_library.h.
#include "harness/real/preload_library.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace kvchaos::harness::real {
namespace {

namespace fs = std::filesystem;

bool Readable(const fs::path& p) { return ::access(p.c_str(), R_OK) == 0; }

// The entry of `env` that sets `key`, or end().
std::vector<std::string>::iterator Find(std::vector<std::string>& env, const std::string& key) {
  return std::find_if(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(key + "=", 0) == 0; });
}

}  // namespace

Result<std::string> FindPreloadLibrary(const PreloadLibrary& lib) {
  if (const char* env = std::getenv(lib.override_env); env != nullptr && *env != '\0') {
    if (Readable(env)) return std::string(env);
    return Status::NotFound(std::string(lib.override_env) + "=" + env + " is not a readable file");
  }
  std::vector<fs::path> looked;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // Build tree: beside tools/kvchaos/kvchaos; install tree: bin/ or lib/kvchaos/.
    looked.push_back(self.parent_path() / lib.file_name);
    looked.push_back(self.parent_path().parent_path() / "lib" / "kvchaos" / lib.file_name);
  }
#ifdef KVCHAOS_PRELOAD_BUILD_DIR
  looked.push_back(fs::path(KVCHAOS_PRELOAD_BUILD_DIR) / lib.file_name);
#endif
  std::string where;
  for (const fs::path& p : looked) {
    if (Readable(p)) return p.string();
    where += (where.empty() ? "" : ", ") + p.string();
  }
  return Status::NotFound(std::string(lib.needed_for) + " need the preload library " + lib.file_name + " (build the " +
                          lib.target + " target; looked at " + where + "; or set " + lib.override_env + ")");
}

void AddPreload(std::vector<std::string>& env, const std::string& library) {
  if (auto it = Find(env, "LD_PRELOAD"); it != env.end()) {
    *it = "LD_PRELOAD=" + library + ":" + it->substr(sizeof "LD_PRELOAD=" - 1);
  } else {
    std::string preload = library;
    if (const char* existing = std::getenv("LD_PRELOAD"); existing != nullptr && *existing != '\0') {
      preload += std::string(":") + existing;
    }
    env.push_back("LD_PRELOAD=" + preload);
  }
  if (Find(env, "ASAN_OPTIONS") != env.end()) return;
  std::string asan = "verify_asan_link_order=0";  // sanitizer builds: the preload loads first
  if (const char* existing = std::getenv("ASAN_OPTIONS"); existing != nullptr && *existing != '\0') {
    asan = std::string(existing) + ":" + asan;
  }
  env.push_back("ASAN_OPTIONS=" + asan);
}

}  // namespace kvchaos::harness::real
