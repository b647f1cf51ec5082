// ConnectRedirect: what the connect preload (harness/real/connect_preload/connect_preload.c) does
// in one `kvchaos node` process: its connections to a loopback port go to another, the node's own
// proxy in front of that server. Real mode uses it where a node learns a server's address at run
// time (the sentinels name the primary), so that a partition cuts that node's links only.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"

namespace kvchaos::harness::real {

struct ConnectRedirect {
  int from_port = 0;  // on 127.0.0.1
  int to_port = 0;    // on 127.0.0.1
};

// The library: $KVCHAOS_CONNECT_PRELOAD when set, else where FindPreloadLibrary looks.
Result<std::string> FindConnectPreload();

// The KEY=VALUE entries that start a process under `preload` with these redirects
// (KVCHAOS_CONNECT_MAP=127.0.0.1:FROM=127.0.0.1:TO,...) added to `env`.
void AddConnectRedirects(std::vector<std::string>& env, const std::string& preload,
                         const std::vector<ConnectRedirect>& redirects);

}  // namespace kvchaos::harness::real
