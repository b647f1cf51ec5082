// `kvchaos storage`: the storages registered with the meta service of a node cluster.
//
//   kvchaos storage add --endpoint HOST:PORT --name NAME [--checksum crc64_full|crc32_xor_int64|off]
//                       [--inline-header-version N]
//       Registers a posix storage on the leader (found from any node's meta or admin port; give
//       --endpoint several times to try several nodes). Blocks saved to it carry meta checksums of
//       that algorithm (default crc64_full), which loads and `kvchaos integrity verify` check.
//       --inline-header-version 1 makes every block carry its inline header (docs/inline-header.md),
//       which `kvchaos integrity rebuild` needs; 0 (the default) writes none.
//       Re-adding the same config is a no-op; a name taken with another config is refused.
//   kvchaos storage list --endpoint HOST:PORT
//       The leader's registered storages as JSON, sorted by name.
//
// Exit status: 0 done, 1 refused or no leader answered, 2 bad arguments.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/client/http_meta_client.h"
#include "core/common/json_text.h"
#include "tools/kvchaos/command_registry.h"

namespace kvchaos::cli {
namespace {

struct StorageArgs {
  std::vector<std::string> endpoints;
  std::string name;
  std::string checksum = "crc64_full";
  int64_t inline_header_version = 0;
  int64_t timeout_ms = 2000;
};

client::LeaderDiscoveryOptions Discovery(const StorageArgs& args) {
  client::LeaderDiscoveryOptions options;
  options.bootstrap = args.endpoints;
  options.request_timeout_ms = args.timeout_ms;
  options.max_attempts = 5;
  return options;
}

[[noreturn]] void Fail(const std::string& what, const Status& s, int code) {
  std::cerr << "kvchaos storage " << what << ": " << s.ToString() << "\n";
  throw CLI::RuntimeError(code);
}

void Add(const StorageArgs& args) {
  Result<meta::StorageConfig> config = meta::StorageConfig::Posix(args.name, args.checksum);
  if (!config.ok()) Fail("add", config.status().WithContext("--checksum"), 2);
  config->integrity.enable_inline_header = args.inline_header_version != 0;
  config->integrity.inline_header_version = args.inline_header_version;
  if (Status v = config->Validate(); !v.ok()) Fail("add", v.WithContext("--inline-header-version"), 2);
  client::HttpMetaClient meta(Runtime::Real(), Discovery(args));
  if (Status s = meta.AddStorage(*config); !s.ok()) Fail("add", s, 1);
  Result<std::string> leader = meta.discovery().Leader();
  std::cout << "registered storage '" << args.name << "' (posix, checksum " << args.checksum
            << (args.inline_header_version != 0 ? ", inline header v" + std::to_string(args.inline_header_version) : "")
            << ") on the leader "
            << (leader.ok() ? *leader : std::string("?")) << "\n";
}

void List(const StorageArgs& args) {
  client::HttpMetaClient meta(Runtime::Real(), Discovery(args));
  Result<std::vector<meta::StorageConfig>> storages = meta.ListStorages();
  if (!storages.ok()) Fail("list", storages.status(), 1);
  nlohmann::json list = nlohmann::json::array();
  for (const meta::StorageConfig& c : *storages) list.push_back(c.ToJson());
  std::cout << DumpJson(nlohmann::json{{"storages", list}}, 2) << std::endl;
}

void AddEndpointOptions(CLI::App* cmd, StorageArgs& args) {
  cmd->add_option("--endpoint", args.endpoints, "host:port of a node (meta or admin port); repeat for several")
      ->required();
  cmd->add_option("--timeout-ms", args.timeout_ms, "per-request timeout (default 2000)");
}

const bool registered = RegisterCommand(
    {"storage", "Storages registered with the meta service: add, list", [](CLI::App& parent) {
       auto* cmd = parent.add_subcommand("storage", "Storages registered with the meta service: add, list");
       cmd->require_subcommand(1);
       auto args = std::make_shared<StorageArgs>();
       auto* add = cmd->add_subcommand("add", "Register a posix storage on the leader");
       AddEndpointOptions(add, *args);
       add->add_option("--name", args->name, "the storage's global_unique_name")->required();
       add->add_option("--checksum", args->checksum, "crc64_full (default), crc32_xor_int64 or off");
       add->add_option("--inline-header-version", args->inline_header_version,
                       "write an inline header of this version with every block (1; default 0: none)");
       add->callback([args] { Add(*args); });
       auto* list = cmd->add_subcommand("list", "Print the leader's registered storages as JSON");
       AddEndpointOptions(list, *args);
       list->callback([args] { List(*args); });
     }});

}  // namespace
}  // namespace kvchaos::cli
