// The wire between ragd and an upstream server: the streamed OpenAI
// completions request that carries a prompt already in token ids (so the
// upstream computes exactly the prompt ragd built and counted), and the
// reading of its Server-Sent Events answer: `data: <json>` events with
// choices[0].text deltas and a finish_reason, a last event with `usage`
// (stream_options.include_usage), then `data: [DONE]`; or an `error` event.
//
// Thread-safety: a CompletionStream belongs to one transfer (one thread).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "inference/engine.h"

namespace ragd::app::upstream {

// The JSON body of POST /v1/completions for `request` on `model`: the prompt
// as token ids, the sampling options, max_tokens, stop strings, stream with usage.
std::string CompletionBody(const std::string& model, const inference::GenerationRequest& request);

struct UpstreamUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

class CompletionStream {
 public:
  // Called with each non-empty text delta; false stops the stream.
  using TextSink = std::function<bool(const std::string&)>;

  // Reads the next bytes of the response. False when `on_text` asked to stop
  // or an event was malformed (see error()).
  bool Feed(std::string_view bytes, const TextSink& on_text);

  // The answer ended properly: a finish_reason arrived (usage may follow).
  bool finished() const { return !finish_reason_.empty(); }
  bool done() const { return done_; }  // `data: [DONE]` arrived
  const std::string& finish_reason() const { return finish_reason_; }
  const std::optional<UpstreamUsage>& usage() const { return usage_; }
  // The upstream's error event (or a malformed event), "" when none; with
  // the HTTP status it names (0 when none).
  const std::string& error() const { return error_; }
  int error_status() const { return error_status_; }

 private:
  bool OnEvent(std::string_view data, const TextSink& on_text);

  std::string pending_;  // bytes of an event line not yet complete
  std::string finish_reason_;
  std::optional<UpstreamUsage> usage_;
  std::string error_;
  int error_status_ = 0;
  bool done_ = false;
};

}  // namespace ragd::app::upstream
