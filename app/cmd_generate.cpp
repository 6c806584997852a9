// `ragd generate`: placeholder until its module lands.
#include <cstdio>

#include "app/commands.h"

namespace ragd::app {

int RunGenerate(const std::vector<std::string>& args) {
  std::fprintf(stderr, "ragd generate: not available in this build yet\n");
  return 1;
}

}  // namespace ragd::app
