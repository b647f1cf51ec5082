#include "tools/kvchaos/command_registry.h"

#include <algorithm>

namespace kvchaos::cli {
namespace {

std::vector<Command>& Registry() {
  static std::vector<Command> commands;
  return commands;
}

}  // namespace

bool RegisterCommand(Command command) {
  Registry().push_back(std::move(command));
  return true;
}

std::vector<Command> RegisteredCommands() {
  std::vector<Command> commands = Registry();
  std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  return commands;
}

}  // namespace kvchaos::cli
