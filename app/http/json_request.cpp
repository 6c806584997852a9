#include "app/http/json_request.h"

#include <cmath>
#include <string_view>

#include "common/text.h"

namespace ragd::app {

Result<Json> ParseJsonObject(const std::string& body) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("request body is not valid JSON");
  if (!j.is_object()) return Status::InvalidArgument("request body must be a JSON object");
  return j;
}

Result<std::string> RequiredString(const Json& j, const char* field, size_t max_bytes) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null())
    return Status::InvalidArgument(std::string("missing field '") + field + "'");
  auto v = OptionalString(j, field, max_bytes);
  if (!v.ok()) return v.status();
  return **v;
}

Result<std::optional<std::string>> OptionalString(const Json& j, const char* field, size_t max_bytes) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return Status::InvalidArgument(std::string("field '") + field + "' must be a string");
  std::string s = it->get<std::string>();
  if (s.size() > max_bytes)
    return Status::InvalidArgument(std::string("field '") + field + "' is longer than " +
                                   std::to_string(max_bytes) + " bytes");
  if (!IsValidUtf8(s))
    return Status::InvalidArgument(std::string("field '") + field + "' is not valid UTF-8");
  return std::optional<std::string>(std::move(s));
}

Result<std::optional<int64_t>> OptionalInt(const Json& j, const char* field, int64_t lo, int64_t hi) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::optional<int64_t>();
  int64_t v;
  if (it->is_number_integer()) {
    v = it->get<int64_t>();
  } else if (it->is_number_float() && std::floor(it->get<double>()) == it->get<double>() &&
             std::fabs(it->get<double>()) < 9e15) {
    v = static_cast<int64_t>(it->get<double>());
  } else {
    return Status::InvalidArgument(std::string("field '") + field + "' must be an integer");
  }
  if (v < lo || v > hi)
    return Status::InvalidArgument(std::string("field '") + field + "' must be between " +
                                   std::to_string(lo) + " and " + std::to_string(hi));
  return std::optional<int64_t>(v);
}

Result<std::optional<double>> OptionalNumber(const Json& j, const char* field, double lo, double hi) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::optional<double>();
  if (!it->is_number()) return Status::InvalidArgument(std::string("field '") + field + "' must be a number");
  const double v = it->get<double>();
  if (!(v >= lo && v <= hi)) {
    Json range = {lo, hi};
    return Status::InvalidArgument(std::string("field '") + field + "' must be between " + range[0].dump() +
                                   " and " + range[1].dump());
  }
  return std::optional<double>(v);
}

Result<std::optional<bool>> OptionalBool(const Json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::optional<bool>();
  if (!it->is_boolean())
    return Status::InvalidArgument(std::string("field '") + field + "' must be true or false");
  return std::optional<bool>(it->get<bool>());
}

Status RefuseUnknownFields(const Json& j, std::initializer_list<std::string_view> allowed,
                           std::string_view where) {
  for (const auto& [key, value] : j.items()) {
    if (value.is_null()) continue;
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (!known) {
      // Long names are cut: the message is for people, the field is the first unknown one.
      const std::string name = key.size() > 64 ? key.substr(0, 64) + "..." : key;
      return Status::InvalidArgument("field '" + name + "' is not supported on " + std::string(where));
    }
  }
  return Status::Ok();
}

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kCorrupt:
    case StatusCode::kUnsupported:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kCancelled:
      return 499;
    case StatusCode::kIoError:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

std::string ErrorTypeFor(StatusCode code) {
  switch (HttpStatusFor(code)) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 409:
      return "conflict_error";
    case 429:
      return "rate_limit_error";
    case 503:
      return "unavailable_error";
    default:
      return "server_error";
  }
}

std::string DumpJson(const Json& j) {
  std::string raw = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  // Outside strings the dump is ASCII, so these UTF-8 sequences are always
  // characters inside strings; escaping them keeps the value and the line.
  // U+0085 is C2 85; U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
  size_t i = raw.find_first_of("\xC2\xE2");
  if (i == std::string::npos) return raw;
  std::string out(raw, 0, i);
  for (; i < raw.size(); ++i) {
    const std::string_view rest = std::string_view(raw).substr(i);
    if (rest.starts_with("\xC2\x85")) {
      out += "\\u0085";
      i += 1;
    } else if (rest.starts_with("\xE2\x80\xA8") || rest.starts_with("\xE2\x80\xA9")) {
      out += rest[2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += raw[i];
    }
  }
  return out;
}

HttpResponse JsonResponse(int http_status, const Json& body) {
  return HttpResponse::Json(http_status, DumpJson(body));
}

HttpResponse ErrorResponse(const Status& status) {
  return HttpResponse::Error(HttpStatusFor(status.code()), ErrorTypeFor(status.code()), status.message());
}

}  // namespace ragd::app
