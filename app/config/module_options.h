// The configuration mapped onto each module's own Options structs, shared by
// the server and the command-line tools so they read one config the same way.
#pragma once

#include "app/config/config.h"
#include "inference/engine.h"
#include "inference/scheduler.h"
#include "retrieval/retriever.h"

namespace ragd::app {

inference::EngineOptions EngineOptionsFor(const Config& config);
inference::SchedulerOptions SchedulerOptionsFor(const Config& config);
retrieval::RetrieverOptions RetrieverOptionsFor(const Config& config);

}  // namespace ragd::app
