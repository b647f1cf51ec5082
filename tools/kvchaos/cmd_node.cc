// `kvchaos node --config node.yaml`: runs one metadata node (elector, registry, meta data plane,
// HTTP/JSON API on the meta and admin ports) until SIGTERM or SIGINT, then stops cleanly: the
// HTTP servers close, a leader resigns and runs its demote path, the heartbeat is deleted.
// Prints one JSON line {"event":"up",...} with the bound ports and the advertised host once
// serving, for scripts. Test-only config keys (kvcm.testing.*) need KVCHAOS_TESTING=1 in the
// environment.
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/common/json_text.h"
#include "core/common/logging.h"
#include "core/common/runtime.h"
#include "core/service/node_server.h"
#include "core/service/node_config.h"
#include "tools/kvchaos/command_registry.h"

namespace kvchaos::cli {
namespace {

volatile std::sig_atomic_t g_node_stop = 0;
void OnNodeSignal(int) { g_node_stop = 1; }

void RunNode(const std::string& path) {
  auto config = service::LoadNodeConfig(path);
  if (!config.ok()) {
    std::cerr << "kvchaos node: " << config.status().message() << "\n";
    throw CLI::RuntimeError(2);
  }
  // The seed only picks the random suffix of a generated node id; it must differ between
  // processes, so it mixes the wall clock and the pid.
  uint64_t seed = static_cast<uint64_t>(Runtime::Real().WallNow().time_since_epoch().count()) ^
                  (static_cast<uint64_t>(::getpid()) << 32);
  service::NodeServer node(Runtime::Real(), *config, seed);
  std::signal(SIGINT, OnNodeSignal);
  std::signal(SIGTERM, OnNodeSignal);
  if (Status s = node.Start(); !s.ok()) {
    std::cerr << "kvchaos node: " << s.ToString() << "\n";
    throw CLI::RuntimeError(1);
  }
  std::cout << DumpJson({{"event", "up"},
                         {"node_id", node.node_id()},
                         {"meta_http_port", node.meta_http_port()},
                         {"admin_http_port", node.admin_http_port()},
                         {"advertised_host", node.node().advertised_host().host}})
            << std::endl;
  while (g_node_stop == 0) Runtime::Real().SleepFor(std::chrono::milliseconds(50));
  node.Stop();
  std::cout << DumpJson(nlohmann::json{{"event", "stopped"}, {"node_id", node.node_id()}}) << std::endl;
}

const bool registered = RegisterCommand(
    {"node", "Run a metadata node (leader election + meta service HTTP API)", [](CLI::App& parent) {
       auto* cmd = parent.add_subcommand("node", "Run a metadata node until SIGTERM/SIGINT");
       auto path = std::make_shared<std::string>();
       cmd->add_option("--config", *path, "node YAML (kvcm.coordination.uri, kvcm.leader_elector.*, kvcm.service.*)")
           ->required();
       cmd->callback([path] { RunNode(*path); });
     }});

}  // namespace
}  // namespace kvchaos::cli
