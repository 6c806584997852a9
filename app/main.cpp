// ragd: the command-line entry point. Each subcommand lives in its own file
// under app/cli/; this file only dispatches.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "ragd_version.h"  // generated at build time (cmake/Version.cmake)
#include "retrieval/blas_core.h"

namespace {

// "ragd 0.1.0 (v0.1.0-12-g32a0453-dirty)": the project version, and the
// commit it was built from when built from a git checkout.
void PrintVersion() {
  if (RAGD_GIT_DESCRIBE[0] != '\0')
    std::printf("ragd %s (%s)\n", RAGD_VERSION, RAGD_GIT_DESCRIBE);
  else
    std::printf("ragd %s\n", RAGD_VERSION);
}

void PrintUsage() {
  std::printf(
      "ragd: a retrieval-augmented generation server\n\n"
      "usage: ragd <command> [options]\n\n"
      "commands:\n");
  for (const ragd::app::Command& c : ragd::app::Commands()) std::printf("  %-12s %s\n", c.name, c.summary);
  std::printf(
      "  help         show this help, or `ragd help <command>`\n"
      "  --version    print the version\n\n"
      "Run `ragd <command> --help` for the options of a command.\n");
}

}  // namespace

int main(int argc, char** argv) {
  ragd::retrieval::RestartWithBetterBlasCore(argv);  // before anything else is done
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || (args[0] == "help" && args.size() == 1)) {
    PrintUsage();
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    PrintVersion();
    return 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  if (command == "help") {
    command = args[0];
    args = {"--help"};
  }
  if (command == ragd::app::kExtractWorkerCommand) return ragd::app::RunExtractWorker(args);
  for (const ragd::app::Command& c : ragd::app::Commands()) {
    if (command == c.name) return c.run(args);
  }
  std::fprintf(stderr, "ragd: unknown command '%s' (see `ragd --help`)\n", command.c_str());
  return 2;
}
