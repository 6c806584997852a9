// Generation options shared by the OpenAI-compatible routes and /v1/ask:
// sampling fields, max_tokens, stop strings, stream flags.
#pragma once

#include <string>
#include <vector>

#include "app/http/json_request.h"
#include "inference/tokenizer/chat_format.h"
#include "inference/tokenizer/sampler.h"

namespace ragd::app {

struct GenerationOptions {
  inference::SamplingOptions sampling;
  int max_tokens = 0;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;
};

// Reads temperature, top_p, top_k, min_p, seed, presence/frequency/repeat
// penalties, logit_bias, max_tokens (or max_completion_tokens), stop, n,
// stream and stream_options from an OpenAI-style body. Every error names the field.
Result<GenerationOptions> ReadGenerationOptions(const Json& body, const GenerationOptions& defaults,
                                                int vocab_size);

// The "messages" of a chat request: {"role","content"} objects whose content
// is a string or an array of text parts; "developer" reads as "system".
Result<std::vector<inference::ChatMessage>> ReadMessages(const Json& body);

}  // namespace ragd::app
