// NodeTransport: how a client reaches a node's API — one call ("GetClusterInfo") with a JSON object
// body to an endpoint ("host:port"), answered with the node's JSON (whatever its code, see
// core/service/wire_format.h). Http() posts to http://endpoint/api/<call>; the simulator carries the
// same calls over its simulated network, so LeaderDiscovery and HttpMetaClient run unchanged there.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace kvchaos::client {

class NodeTransport {
 public:
  virtual ~NodeTransport() = default;
  // Unavailable when the node cannot be reached within `timeout_ms`; Internal when it answered
  // without a JSON object; otherwise the answer.
  virtual Result<nlohmann::json> Call(const std::string& endpoint, std::string_view call, const nlohmann::json& body,
                                      int64_t timeout_ms) = 0;
  // The process-wide HTTP transport (PostJson).
  static NodeTransport& Http();
};

}  // namespace kvchaos::client
