// The connect preload's environment; see connect_redirect.h.
#include "harness/real/connect_redirect.h"

#include "harness/real/preload_library.h"

namespace kvchaos::harness::real {

Result<std::string> FindConnectPreload() {
  return FindPreloadLibrary(PreloadLibrary{"libkvchaos_connect_preload.so", "KVCHAOS_CONNECT_PRELOAD", "kvchaos_connect_preload",
                                           "partitions over redis-sentinel in real mode"});
}

void AddConnectRedirects(std::vector<std::string>& env, const std::string& preload,
                         const std::vector<ConnectRedirect>& redirects) {
  std::string map;
  for (const ConnectRedirect& r : redirects) {
    map += (map.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(r.from_port) +
           "=127.0.0.1:" + std::to_string(r.to_port);
  }
  env.push_back("KVCHAOS_CONNECT_MAP=" + map);
  AddPreload(env, preload);
}

}  // namespace kvchaos::harness::real
