#include "core/client/cluster_view.h"

#include "core/client/leader_discovery.h"
#include "core/service/wire_format.h"

namespace kvchaos::client {

Result<nlohmann::json> FetchClusterView(const std::string& endpoint, int64_t timeout_ms) {
  Result<nlohmann::json> info = PostJson(endpoint, "GetClusterInfo", nlohmann::json::object(), timeout_ms);
  if (!info.ok()) return info.status();
  if (Status s = service::wire::StatusFromAnswer(*info); !s.ok()) return s.WithContext(endpoint);
  nlohmann::json out = *info;
  out.erase("code");
  auto manager = PostJson(endpoint, "GetManagerClusterInfo", nlohmann::json::object(), timeout_ms);
  if (manager.ok() && service::wire::StatusFromAnswer(*manager).ok()) {
    for (auto it = manager->begin(); it != manager->end(); ++it) {
      if (it.key() != "code") out[it.key()] = it.value();
    }
  }
  auto nodes = PostJson(endpoint, "ListNodes", nlohmann::json::object(), timeout_ms);
  if (nodes.ok() && service::wire::StatusFromAnswer(*nodes).ok()) out["nodes"] = (*nodes)["nodes"];
  return out;
}

}  // namespace kvchaos::client
