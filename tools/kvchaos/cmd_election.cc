// `kvchaos election`: look at and take part in leader election from a shell.
//
//   kvchaos election info --uri redis://127.0.0.1:6379/?cluster_name=app
//       prints the lock holder, its remaining TTL, the holding's fencing token (null, with a
//       "fencing" note, for a holder that took none: an upstream node; the newest token when the
//       lock is free), the leader's published endpoint and the live nodes (from heartbeats) as
//       one JSON object.
//   kvchaos election campaign --uri file:///tmp/lock --node-id n1 [--lease-ms 10000] ...
//       runs a LeaderElector (and a heartbeat) until SIGINT/SIGTERM or --duration-ms, printing one
//       JSON line per transition; for multi-process failover experiments with real backends.
//
// Exit status: 0 success, 2 bad input or an unreachable backend.
#include <csignal>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/common/json_text.h"
#include "core/common/logging.h"
#include "core/common/runtime.h"
#include "core/election/coordination_uri.h"
#include "core/election/leader_elector.h"
#include "core/election/node_registry.h"
#include "tools/kvchaos/command_registry.h"

namespace kvchaos::cli {
namespace {

using election::CoordinationBackend;

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

std::unique_ptr<CoordinationBackend> OpenBackend(const std::string& uri) {
  auto backend = election::CreateCoordinationBackend(uri, Runtime::Real());
  if (!backend.ok()) {
    std::cerr << "kvchaos election: " << backend.status().message() << "\n";
    throw CLI::RuntimeError(2);
  }
  return std::move(*backend);
}

int64_t WallMs() { return ToMillis(Runtime::Real().WallNow().time_since_epoch()); }

void Info(const std::string& uri, const std::string& lock_key) {
  auto backend = OpenBackend(uri);
  if (Status s = backend->Init(); !s.ok()) {
    std::cerr << "kvchaos election info: " << s.ToString() << "\n";
    throw CLI::RuntimeError(2);
  }
  auto holder = backend->GetLockHolder(lock_key, election::kNoDeadline);
  if (!holder.ok()) {
    std::cerr << "kvchaos election info: " << holder.status().ToString() << "\n";
    throw CLI::RuntimeError(2);
  }
  election::NodeRegistry registry(Runtime::Real(), *backend, {"kvchaos-cli", "", 0, 0, 0, 0}, Millis(1000),
                                  Millis(2000));
  nlohmann::json out = {{"backend", backend->Describe()},
                        {"lock_key", lock_key},
                        {"holder", holder->holder},
                        {"remaining_ttl_ms", ToMillis(holder->remaining_ttl)},
                        {"fencing_token", holder->token},
                        {"leader_endpoint", nullptr},
                        {"live_nodes", nlohmann::json::array()}};
  if (!holder->holder.empty() && holder->token == 0) {
    // An upstream node takes the lock without a token: a token left by an earlier kvchaos term
    // is not this holder's, and nothing fences this term's writes.
    out["fencing_token"] = nullptr;
    out["fencing"] =
        "none: the holder took no fencing token (an upstream node); fencing needs every node to be kvchaos";
  }
  auto leader = registry.GetLeaderEndpoint(lock_key);
  if (leader.ok() && leader->has_value()) out["leader_endpoint"] = election::NodeEndpointJson(**leader);
  if (!leader.ok()) out["leader_endpoint_error"] = leader.status().message();
  auto nodes = registry.ListLiveNodes();
  if (!nodes.ok()) {
    std::cerr << "kvchaos election info: " << nodes.status().ToString() << "\n";
    throw CLI::RuntimeError(2);
  }
  for (const auto& n : *nodes) {
    nlohmann::json j = election::NodeEndpointJson(n.endpoint);
    j["heartbeat_wall_ms"] = n.heartbeat_wall_ms;
    out["live_nodes"].push_back(j);
  }
  std::cout << DumpJson(out, 2) << std::endl;
}

struct CampaignArgs {
  std::string uri;
  election::LeaderElectorOptions options;
  std::string host = "127.0.0.1";
  int admin_http_port = 0;
  int64_t duration_ms = 0;
  int64_t heartbeat_ms = 1000;
};

void Emit(const std::string& event, const std::string& node_id, nlohmann::json extra = {}) {
  nlohmann::json j = {{"event", event}, {"node_id", node_id}, {"wall_ms", WallMs()}};
  if (extra.is_object()) j.update(extra);
  std::cout << DumpJson(j) << std::endl;  // one line per event, flushed: readers follow it live
}

// The elector names its options as config keys (leader_elector.node_id); here they came from flags.
std::string InFlagTerms(std::string message) {
  static const std::pair<const char*, const char*> kFlags[] = {{"leader_elector.node_id", "--node-id"},
                                                               {"leader_elector.lease_ms", "--lease-ms"},
                                                               {"leader_elector.loop_interval_ms", "--loop-interval-ms"},
                                                               {"leader_elector.safety_margin_ms", "--safety-margin-ms"},
                                                               {"loop_interval_ms", "--loop-interval-ms"},
                                                               {"lease_ms", "--lease-ms"}};
  for (const auto& [key, flag] : kFlags) {
    for (size_t at = message.find(key); at != std::string::npos; at = message.find(key, at + std::strlen(flag))) {
      message.replace(at, std::strlen(key), flag);
    }
  }
  return message;
}

void Campaign(const CampaignArgs& args) {
  InitLogging();
  if (Status s = election::ValidateLeaderElectorOptions(args.options); !s.ok()) {
    std::cerr << "kvchaos election campaign: " << InFlagTerms(s.message()) << "\n";
    throw CLI::RuntimeError(2);
  }
  auto backend = OpenBackend(args.uri);
  if (Status s = backend->Init(); !s.ok()) {
    std::cerr << "kvchaos election campaign: backend not ready yet (will retry): " << s.ToString() << "\n";
  }
  const std::string id = args.options.node_id;
  election::LeaderElector elector(
      Runtime::Real(), *backend, args.options,
      {[&](election::FencingToken token) { Emit("become_leader", id, {{"token", token}}); },
       [&] { Emit("no_longer_leader", id); }});
  election::NodeRegistry registry(Runtime::Real(), *backend, {id, args.host, 0, 0, 0, args.admin_http_port},
                                  Millis(args.heartbeat_ms), Millis(3 * args.heartbeat_ms));
  if (Status s = elector.Start(); !s.ok()) {
    std::cerr << "kvchaos election campaign: " << s.message() << "\n";
    throw CLI::RuntimeError(2);
  }
  if (Status s = registry.Start(); !s.ok()) {
    std::cerr << "kvchaos election campaign: " << s.message() << "\n";
    throw CLI::RuntimeError(2);
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  Emit("started", id, {{"lease_ms", args.options.lease_ms}, {"loop_interval_ms", args.options.loop_interval_ms}});
  const MonoTime end = Runtime::Real().Now() + Millis(args.duration_ms);
  while (g_stop == 0 && (args.duration_ms == 0 || Runtime::Real().Now() < end)) {
    Runtime::Real().SleepFor(Millis(20));
  }
  registry.Stop();
  elector.Stop();
  Emit("stopped", id);
}

const bool registered = RegisterCommand(
    {"election", "Leader election: show the lock and live nodes, or campaign from a shell", [](CLI::App& parent) {
       CLI::App* cmd = parent.add_subcommand("election", "Leader election: inspect or campaign");
       cmd->require_subcommand(1);

       auto info_uri = std::make_shared<std::string>();
       auto info_key = std::make_shared<std::string>(election::kLeaderLockKey);
       CLI::App* info = cmd->add_subcommand("info", "Print the lock holder, fencing token and live nodes as JSON");
       info->add_option("--uri", *info_uri,
                        "coordination URI: memory:// (empty by nature), file:///dir, redis://host:port/?db=N, "
                        "etcd://host:port[,host:port...]/?prefix=P (docs/coordination.md)")
           ->required();
       info->add_option("--lock-key", *info_key, "lock key")->capture_default_str();
       info->callback([info_uri, info_key] { Info(*info_uri, *info_key); });

       auto a = std::make_shared<CampaignArgs>();
       CLI::App* camp = cmd->add_subcommand("campaign", "Run a LeaderElector, printing transitions as JSON lines");
       camp->add_option("--uri", a->uri, "coordination URI")->required();
       camp->add_option("--node-id", a->options.node_id, "this node's id")->required();
       camp->add_option("--lease-ms", a->options.lease_ms, "lease")->capture_default_str();
       camp->add_option("--loop-interval-ms", a->options.loop_interval_ms, "lock loop period")->capture_default_str();
       camp->add_option("--safety-margin-ms", a->options.safety_margin_ms, "-1 = default")->capture_default_str();
       camp->add_option("--heartbeat-ms", a->heartbeat_ms, "node heartbeat period (TTL = 3x)")->capture_default_str();
       camp->add_option("--host", a->host, "advertised host")->capture_default_str();
       camp->add_option("--admin-http-port", a->admin_http_port, "advertised admin port")->capture_default_str();
       camp->add_option("--duration-ms", a->duration_ms, "stop after this long (0 = until SIGINT/SIGTERM)")
           ->capture_default_str();
       camp->callback([a] { Campaign(*a); });
     }});

}  // namespace
}  // namespace kvchaos::cli
