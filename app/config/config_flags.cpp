#include "app/config/config_flags.h"

#include <cstdlib>

namespace ragd::app {

void AddConfigFlags(Flags& flags) {
  flags.Value("--config", "-c", "configuration file (JSON with comments); default $RAGD_CONFIG");
  flags.Value("--set", "", "override one key, e.g. --set retrieval.top_k=8 (repeatable)", true);
  flags.Value("--host", "", "listen address (server.host)");
  flags.Value("--port", "-p", "listen port (server.port)");
  flags.Value("--data", "-d", "data folder (data_dir)");
}

Result<Config> ConfigFromFlags(const Flags& flags) {
  ConfigSources src;
  if (auto f = flags.Get("--config")) {
    src.file = *f;
  } else if (const char* env = std::getenv("RAGD_CONFIG"); env != nullptr && *env != '\0') {
    src.file = env;
  }
  src.getenv = [](const char* name) -> const char* { return std::getenv(name); };
  for (const std::string& kv : flags.GetAll("--set")) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) return Status::InvalidArgument("--set expects key=value, got '" + kv + "'");
    src.overrides.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (auto v = flags.Get("--host")) src.overrides.emplace_back("server.host", *v);
  if (auto v = flags.Get("--port")) src.overrides.emplace_back("server.port", *v);
  if (auto v = flags.Get("--data")) src.overrides.emplace_back("data_dir", *v);
  return LoadConfig(src);
}

}  // namespace ragd::app
