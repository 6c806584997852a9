// The ragd subcommands. Each returns a process exit code: 0 success, 1 a
// runtime failure (bad model file, port in use), 2 a usage error.
#pragma once

#include <string>
#include <vector>

namespace ragd::app {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

const std::vector<Command>& Commands();

int RunServe(const std::vector<std::string>& args);
int RunModelInfo(const std::vector<std::string>& args);
int RunGenerate(const std::vector<std::string>& args);
int RunIngest(const std::vector<std::string>& args);
int RunSearch(const std::vector<std::string>& args);
int RunEval(const std::vector<std::string>& args);
int RunUser(const std::vector<std::string>& args);
// Hidden: the server's document extraction child (cmd_extract_worker.cpp).
int RunExtractWorker(const std::vector<std::string>& args);
inline constexpr const char* kExtractWorkerCommand = "extract-worker";

}  // namespace ragd::app
