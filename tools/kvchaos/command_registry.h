// Subcommands of the `kvchaos` binary register themselves here from their own cmd_*.cc file:
//
//   static const bool registered = kvchaos::cli::RegisterCommand(
//       {"store", "PosixStore tools: check a config, benchmark", [](CLI::App& app) { ... }});
//
// The setup function adds the subcommand to `app` and its callback does the work; a callback
// reports failure by throwing CLI::RuntimeError(exit_code).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace kvchaos::cli {

struct Command {
  std::string name;
  std::string summary;
  std::function<void(CLI::App& parent)> setup;
};

bool RegisterCommand(Command command);
// Registered commands sorted by name.
std::vector<Command> RegisteredCommands();

}  // namespace kvchaos::cli
