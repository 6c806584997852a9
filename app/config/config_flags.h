// The configuration flags every server-side command shares:
// --config FILE, --set key=value, --host, --port, --data.
#pragma once

#include "app/config/config.h"
#include "app/config/flags.h"

namespace ragd::app {

void AddConfigFlags(Flags& flags);
// Loads defaults < file (--config, else $RAGD_CONFIG) < environment < flags.
Result<Config> ConfigFromFlags(const Flags& flags);

}  // namespace ragd::app
