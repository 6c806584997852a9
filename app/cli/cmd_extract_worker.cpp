// `ragd extract-worker`: not for people. The server starts it once per upload
// to extract the document's text under CPU, memory and output limits
// (corpus/extract_process.h describes the limits and the protocol on
// stdin/stdout). Hidden from `ragd --help`.
#include <cstdio>

#include "app/cli/commands.h"
#include "corpus/extract_process.h"

namespace ragd::app {

int RunExtractWorker(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::fprintf(stderr, "ragd extract-worker: internal command of the server; it takes no arguments\n");
    return 2;
  }
  return corpus::ExtractWorkerMain(0, 1);
}

}  // namespace ragd::app
