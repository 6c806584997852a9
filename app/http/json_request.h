// Reading and validating JSON request bodies, field by field, and turning
// Status values into JSON error responses. Every message names the field.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/http/http_server.h"
#include "common/status.h"

namespace ragd::app {

using Json = nlohmann::json;

// Parses the body as a JSON object (400 "invalid JSON" / "must be an object").
Result<Json> ParseJsonObject(const std::string& body);

// Typed field access. Missing optional fields give nullopt; a present field of
// the wrong type or out of range is kInvalidArgument naming it.
Result<std::string> RequiredString(const Json& j, const char* field, size_t max_bytes = 1 << 20);
Result<std::optional<std::string>> OptionalString(const Json& j, const char* field,
                                                  size_t max_bytes = 1 << 20);
Result<std::optional<int64_t>> OptionalInt(const Json& j, const char* field, int64_t lo, int64_t hi);
Result<std::optional<double>> OptionalNumber(const Json& j, const char* field, double lo, double hi);
Result<std::optional<bool>> OptionalBool(const Json& j, const char* field);

// kInvalidArgument naming the first field of the object `j` that `allowed`
// does not list ("field 'tools' is not supported on /v1/chat/completions"):
// an option the server would not honour is refused, never ignored. A null
// value counts as absent, as clients send null for options they leave unset.
Status RefuseUnknownFields(const Json& j, std::initializer_list<std::string_view> allowed,
                           std::string_view where);

// The HTTP status and OpenAI-style error type for a Status code.
int HttpStatusFor(StatusCode code);
std::string ErrorTypeFor(StatusCode code);

// {"error":{"code","type","message"}} with the status mapped from `status`.
HttpResponse ErrorResponse(const Status& status);
HttpResponse JsonResponse(int http_status, const Json& body);

// Serializes without throwing on invalid UTF-8 (replaced by U+FFFD). U+0085,
// U+2028 and U+2029 are written as \u escapes: clients that split text on
// every Unicode line break (Python's str.splitlines) would cut an SSE line.
std::string DumpJson(const Json& j);

}  // namespace ragd::app
