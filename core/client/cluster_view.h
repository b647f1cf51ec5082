// One node's view of the metadata cluster, as `kvchaos cluster info` prints it and the Python
// module's cluster_info() returns it: GetClusterInfo (self, leader id and endpoint), plus, when
// the endpoint is an admin port, GetManagerClusterInfo (elector state, is_leader, fencing token,
// lease expiry) and ListNodes ("nodes"). On a meta port those two are 404 and simply left out.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace kvchaos::client {

// Unavailable when the node cannot be reached; the node's Status (prefixed with the endpoint) when
// GetClusterInfo is not OK. The answer's "code" is left out.
Result<nlohmann::json> FetchClusterView(const std::string& endpoint, int64_t timeout_ms);

}  // namespace kvchaos::client
