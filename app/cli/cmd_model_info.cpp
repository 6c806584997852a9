// `ragd model-info PATH`
#include <cstdio>

#include "app/cli/commands.h"
#include "app/cli/model_info.h"
#include "app/config/flags.h"

namespace ragd::app {

int RunModelInfo(const std::vector<std::string>& args) {
  Flags flags("ragd model-info PATH...",
              "Reads the header of a GGUF or safetensors file (never its weights) and prints\n"
              "its architecture, sizes, vocabulary and tensor-type histogram.");
  if (auto code = ParseOrExit(flags, args)) return *code;
  if (flags.positional().empty()) {
    std::fprintf(stderr, "ragd model-info: give a model file (see --help)\n");
    return 2;
  }
  int rc = 0;
  for (const std::string& path : flags.positional()) {
    auto info = DescribeModelFile(path);
    if (!info.ok()) {
      std::fprintf(stderr, "ragd model-info: %s\n", info.status().message().c_str());
      rc = 1;
      continue;
    }
    std::printf("%s", info->c_str());
  }
  return rc;
}

}  // namespace ragd::app
