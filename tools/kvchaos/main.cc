// kvchaos: one binary for the store, integrity, node, faultfs, simulator, scenario and report tools.
#include <CLI/CLI.hpp>

#include <iostream>

#include "core/common/logging.h"
#include "core/common/version.h"
#include "tools/kvchaos/command_registry.h"

namespace {

void PrintHelp(const CLI::App& app) {
  std::cout << "kvchaos " << kvchaos::kVersion << " — a KV-cache storage core and the harness that attacks it\n\n"
            << "Usage: kvchaos <subcommand> [options]   (kvchaos <subcommand> --help for its options)\n\n"
            << "Subcommands:\n";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    std::cout << "  " << sub->get_name();
    for (size_t pad = sub->get_name().size(); pad < 12; ++pad) std::cout << ' ';
    std::cout << sub->get_description() << "\n";
  }
  std::cout << "\nEnvironment: KVCHAOS_LOG=trace|debug|info|warn|error|off sets the log level.\n";
}

}  // namespace

int main(int argc, char** argv) {
  kvchaos::InitLogging();
  CLI::App app{"kvchaos: a KV-cache storage core and the harness that attacks it", "kvchaos"};
  app.set_version_flag("--version",
                       std::string("kvchaos ") + kvchaos::kVersion + " (build " + kvchaos::kBuildId + ")");
  app.require_subcommand(1);

  CLI::App* help = app.add_subcommand("help", "Show the subcommands and what they do");
  help->callback([&app] { PrintHelp(app); });
  for (const kvchaos::cli::Command& command : kvchaos::cli::RegisteredCommands()) command.setup(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
