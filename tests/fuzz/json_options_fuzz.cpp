// JSON request bodies as every generating route reads them: the object itself
// (app/http/json_request.h), the generation options and the chat messages
// (app/routes/request_options.h), and the typed fields the other routes take.
// Any body is either a value or a 400 naming a field; the error and every
// answer built from a body must serialize to valid JSON.
#include <cstdint>
#include <string>

#include "app/http/json_request.h"
#include "app/routes/request_options.h"
#include "common/text.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ragd;
using namespace ragd::app;

namespace {

// Qwen2.5's vocabulary size, what the answer model's routes pass; the tiny
// one makes logit_bias and top_k limits reachable.
constexpr int kVocabSizes[] = {151936, 7};

void CheckError(const Status& st) {
  FUZZ_CHECK(!st.ok(), "error without a code");
  const HttpResponse r = ErrorResponse(st);
  FUZZ_CHECK(r.status >= 400 && r.status < 600, "error status");
  const Json parsed = Json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!parsed.is_discarded() && parsed.contains("error"), "error body is not JSON");
}

template <typename T>
void Check(const Result<T>& r) {
  if (!r.ok()) CheckError(r.status());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(fuzz::AsText(data, size));
  auto j = ParseJsonObject(body);
  if (!j.ok()) {
    CheckError(j.status());
    return 0;
  }
  FUZZ_CHECK(j->is_object(), "ParseJsonObject gave a non-object");

  // What the routes send back is always parseable and equal to what was read.
  const std::string dumped = DumpJson(*j);
  const Json again = Json::parse(dumped, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!again.is_discarded() && again == *j, "DumpJson does not round-trip");

  for (int vocab : kVocabSizes) {
    auto opts = ReadGenerationOptions(*j, GenerationOptions{}, vocab);
    Check(opts);
    if (opts.ok()) {
      FUZZ_CHECK(opts->stop.size() <= 4, "more than 4 stop strings");
      for (const auto& [id, bias] : opts->sampling.logit_bias)
        FUZZ_CHECK(id >= 0 && id < vocab && bias >= -100 && bias <= 100, "logit_bias out of range");
    }
  }
  auto messages = ReadMessages(*j);
  Check(messages);
  if (messages.ok()) {
    FUZZ_CHECK(!messages->empty(), "empty messages accepted");
    for (const auto& m : *messages)
      FUZZ_CHECK(m.role == "system" || m.role == "user" || m.role == "assistant", "unknown role accepted");
  }
  // The typed fields of /v1/ask, /v1/completions, /v1/embeddings, /tokenize.
  Check(RequiredString(*j, "question", 20000));
  Check(RequiredString(*j, "prompt"));
  Check(OptionalString(*j, "model", 256));
  Check(OptionalString(*j, "encoding_format", 16));
  Check(OptionalInt(*j, "top_k", 1, 20));
  Check(OptionalInt(*j, "seed", INT64_MIN, INT64_MAX));
  Check(OptionalNumber(*j, "temperature", 0, 2));
  Check(OptionalBool(*j, "add_special"));
  if (auto s = OptionalString(*j, "title", 1024); s.ok() && s->has_value())
    FUZZ_CHECK(IsValidUtf8(**s) && (*s)->size() <= 1024, "OptionalString contract");
  return 0;
}
