// The configuration mapped onto each module's own Options structs, shared by
// the server and the command-line tools so they read one config the same way.
#pragma once

#include "app/config/config.h"
#include "inference/engine.h"
#include "inference/scheduler.h"
#include "retrieval/retriever.h"

namespace ragd::app {

// The engine options of the LLM file at `model_path` (one of config.LlmPaths()),
// with the chat template that models.chat_templates names for model `id`.
inference::EngineOptions EngineOptionsFor(const Config& config, const std::string& model_path,
                                          const std::string& id);
inference::SchedulerOptions SchedulerOptionsFor(const Config& config);
retrieval::RetrieverOptions RetrieverOptionsFor(const Config& config);

}  // namespace ragd::app
