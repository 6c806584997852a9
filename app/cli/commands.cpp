#include "app/cli/commands.h"

namespace ragd::app {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"serve", "run the HTTP server", RunServe},
      {"model-info", "describe a GGUF or safetensors model file", RunModelInfo},
      {"generate", "generate text with the language model", RunGenerate},
      {"ingest", "add documents (files or folders) to the corpus", RunIngest},
      {"search", "search the corpus and print ranked passages", RunSearch},
      {"eval", "evaluate retrieval and answers on a labelled question set", RunEval},
      {"user", "manage accounts: list, create, disable, reset passwords, revoke keys", RunUser},
  };
  return kCommands;
}

}  // namespace ragd::app
