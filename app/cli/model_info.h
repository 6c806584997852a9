// `ragd model-info PATH`: a human-readable summary of a GGUF or safetensors file.
#pragma once

#include <string>

#include "common/status.h"

namespace ragd::app {

// Reads the file's header (never its weights) and describes it. Malformed or
// truncated files give an error value naming the problem.
Result<std::string> DescribeModelFile(const std::string& path);

}  // namespace ragd::app
