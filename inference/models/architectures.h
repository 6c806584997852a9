// Loaders of the supported architectures, one per file (gemma3.cpp, ...).
// Each validates every tensor it needs and returns a ready Model. LoadModel()
// in model.cpp dispatches on general.architecture.
#pragma once

#include <memory>

#include "common/status.h"
#include "inference/gguf.h"
#include "inference/models/model.h"

namespace ragd::inference {

Result<std::unique_ptr<Model>> LoadGemma3(const GgufFile& file, const ModelOptions& options);
Result<std::unique_ptr<Model>> LoadLlama(const GgufFile& file, const ModelOptions& options);
Result<std::unique_ptr<Model>> LoadQwen2(const GgufFile& file, const ModelOptions& options);
Result<std::unique_ptr<Model>> LoadQwen3(const GgufFile& file, const ModelOptions& options);

}  // namespace ragd::inference
