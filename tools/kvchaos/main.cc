// kvchaos: one binary for the store, integrity, node, faultfs, simulator, scenario and report tools.
//
// Exit status of every subcommand: 0 success, 1 what the subcommand says (a violation, a
// mismatch, a failed check), 2 bad arguments or input (also for anything CLI11 itself refuses:
// a missing, unknown or ill-typed option), 130 interrupted where a subcommand handles it.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "core/common/logging.h"
#include "core/common/version.h"
#include "tools/kvchaos/command_registry.h"

namespace {

constexpr int kBadArguments = 2;

void PrintHelp(const CLI::App& app) {
  std::cout << "kvchaos " << kvchaos::kVersion << " — a KV-cache storage core and the harness that attacks it\n\n"
            << "Usage: kvchaos <subcommand> [options]   (kvchaos help <subcommand>, or kvchaos <subcommand> --help,\n"
            << "                                         for its options)\n\n"
            << "Subcommands:\n";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    std::cout << "  " << sub->get_name();
    for (size_t pad = sub->get_name().size(); pad < 12; ++pad) std::cout << ' ';
    std::cout << sub->get_description() << "\n";
  }
  std::cout << "\nExit status: 0 success, 1 a failed check (a violation, a mismatch, an unreachable node), 2 bad\n"
            << "arguments or input.\n"
            << "Environment: KVCHAOS_LOG=trace|debug|info|warn|error|off sets the log level.\n";
}

// `kvchaos help [SUBCOMMAND...]`: the overview, or one subcommand's options.
void Help(const CLI::App& app, const std::vector<std::string>& path) {
  if (path.empty()) {
    PrintHelp(app);
    return;
  }
  const CLI::App* target = &app;
  std::string name = "kvchaos";  // the path above `target`, as help() wants it
  for (const std::string& part : path) {
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : target->get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == part && part != "help") next = sub;
    }
    if (next == nullptr) {
      const std::string above = target == &app ? name : name + " " + target->get_name();
      std::cerr << "kvchaos help: '" << above << " " << part << "' is not a subcommand; kvchaos help lists them\n";
      throw CLI::RuntimeError(kBadArguments);
    }
    if (target != &app) name += " " + target->get_name();
    target = next;
  }
  std::cout << target->help(name);
}

// The deepest subcommand the user got to, and its path ("kvchaos store bench"), for messages.
const CLI::App* ParsedApp(const CLI::App& app, std::string* path) {
  *path = "kvchaos";
  const CLI::App* at = &app;
  for (;;) {
    const std::vector<const CLI::App*> parsed = at->get_subcommands([](const CLI::App* s) { return s->parsed(); });
    if (parsed.empty()) return at;
    at = parsed.front();
    *path += " " + at->get_name();
  }
}

}  // namespace

int main(int argc, char** argv) {
  kvchaos::InitLogging();
  CLI::App app{"kvchaos: a KV-cache storage core and the harness that attacks it", "kvchaos"};
  app.set_version_flag("--version",
                       std::string("kvchaos ") + kvchaos::kVersion + " (build " + kvchaos::kBuildId + ")");
  app.require_subcommand(1);

  auto help_path = std::make_shared<std::vector<std::string>>();
  CLI::App* help = app.add_subcommand("help", "Show the subcommands, or one subcommand's options");
  help->add_option("subcommand", *help_path, "e.g. run, or store bench");
  help->callback([&app, help_path] { Help(app, *help_path); });
  for (const kvchaos::cli::Command& command : kvchaos::cli::RegisteredCommands()) command.setup(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a subcommand's verdict; it printed its own message
  } catch (const CLI::ParseError& e) {
    // CLI11's own refusals (missing, unknown or ill-typed options) get the documented exit code.
    std::string path;
    const CLI::App* at = ParsedApp(app, &path);
    // A word where a subcommand was due: say so, rather than "A subcommand is required".
    const std::vector<std::string> rest = at->remaining();
    if (!at->get_subcommands([](const CLI::App*) { return true; }).empty() && !rest.empty() && !rest[0].empty() &&
        rest[0][0] != '-') {
      std::cerr << path << ": '" << rest[0] << "' is not a subcommand (kvchaos help" << path.substr(7)
                << " lists them)\n";
      return kBadArguments;
    }
    std::cerr << path << ": " << e.what() << "\n(" << path << " --help lists the options)\n";
    return kBadArguments;
  }
  return 0;
}
