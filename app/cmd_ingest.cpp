// `ragd ingest`: placeholder until its module lands.
#include <cstdio>

#include "app/commands.h"

namespace ragd::app {

int RunIngest(const std::vector<std::string>& args) {
  std::fprintf(stderr, "ragd ingest: not available in this build yet\n");
  return 1;
}

}  // namespace ragd::app
