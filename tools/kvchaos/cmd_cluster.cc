// `kvchaos cluster info --endpoint host:port`: asks one node (meta or admin HTTP port) for its
// cluster view and prints it as JSON: GetClusterInfo, plus GetManagerClusterInfo and ListNodes
// when the endpoint is an admin port.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/client/cluster_view.h"
#include "core/common/json_text.h"
#include "tools/kvchaos/command_registry.h"

namespace kvchaos::cli {
namespace {

void ClusterInfo(const std::string& endpoint, int64_t timeout_ms) {
  Result<nlohmann::json> view = client::FetchClusterView(endpoint, timeout_ms);
  if (!view.ok()) {
    std::cerr << "kvchaos cluster info: " << view.status().ToString() << "\n";
    throw CLI::RuntimeError(1);
  }
  std::cout << DumpJson(*view, 2) << std::endl;
}

const bool registered = RegisterCommand({"cluster", "Cluster view of the metadata nodes", [](CLI::App& parent) {
  auto* cmd = parent.add_subcommand("cluster", "Cluster view of the metadata nodes");
  cmd->require_subcommand(1);
  auto* info = cmd->add_subcommand("info", "Print the cluster view of one node as JSON");
  auto endpoint = std::make_shared<std::string>();
  auto timeout_ms = std::make_shared<int64_t>(2000);
  info->add_option("--endpoint", *endpoint, "host:port of any node (admin port shows the most)")->required();
  info->add_option("--timeout-ms", *timeout_ms, "per-request timeout");
  info->callback([endpoint, timeout_ms] { ClusterInfo(*endpoint, *timeout_ms); });
}});

}  // namespace
}  // namespace kvchaos::cli
