// `ragd search`: placeholder until its module lands.
#include <cstdio>

#include "app/commands.h"

namespace ragd::app {

int RunSearch(const std::vector<std::string>& args) {
  std::fprintf(stderr, "ragd search: not available in this build yet\n");
  return 1;
}

}  // namespace ragd::app
