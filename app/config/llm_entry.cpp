#include "app/config/llm_entry.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/text.h"

namespace ragd::app {
namespace {

using nlohmann::json;

std::string FileId(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (name.ends_with(".gguf")) name.resize(name.size() - 5);
  return name;
}

Status Bad(const std::string& id, const std::string& what) {
  return Status::InvalidArgument("config key 'models.llm': pool" + (id.empty() ? "" : " '" + id + "'") +
                                 ": " + what);
}

Status ReadString(const json& j, const char* name, const std::string& id, std::string* out) {
  auto it = j.find(name);
  if (it == j.end()) return Status::Ok();
  if (!it->is_string()) return Bad(id, std::string("'") + name + "' must be a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

Status ReadInt(const json& j, const char* name, const std::string& id, int64_t lo, int64_t hi, int64_t* out) {
  auto it = j.find(name);
  if (it == j.end()) return Status::Ok();
  if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi)
    return Bad(id, std::string("'") + name + "' must be an integer between " + std::to_string(lo) + " and " +
                       std::to_string(hi));
  *out = it->get<int64_t>();
  return Status::Ok();
}

Status ReadUrls(const json& j, const std::string& id, std::vector<std::string>* out) {
  auto it = j.find("upstream");
  if (it == j.end()) return Bad(id, "'upstream' (the endpoints' URLs) is required");
  const json list = it->is_string() ? json::array({*it}) : *it;
  if (!list.is_array() || list.empty()) return Bad(id, "'upstream' must be a URL or a list of URLs");
  for (const json& u : list) {
    if (!u.is_string()) return Bad(id, "'upstream' must be a URL or a list of URLs");
    std::string url = u.get<std::string>();
    if (!url.starts_with("http://") && !url.starts_with("https://"))
      return Bad(id, "upstream URL '" + url + "' must start with http:// or https://");
    while (url.ends_with("/")) url.pop_back();
    out->push_back(url);
  }
  return Status::Ok();
}

}  // namespace

bool IsPoolEntry(const std::string& text) { return Trim(text).starts_with("{"); }

Result<LlmEntry> ParseLlmEntry(const std::string& text,
                               const std::function<std::string(const std::string&)>& resolve) {
  LlmEntry e;
  if (!IsPoolEntry(text)) {
    e.path = resolve(text);
    e.id = FileId(e.path);
    return e;
  }
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Bad("", "not a JSON object: " + text);
  static const char* kKnown[] = {"id",
                                 "upstream",
                                 "model",
                                 "api_key_env",
                                 "concurrency",
                                 "max_queue",
                                 "failures_to_open",
                                 "health_interval_ms",
                                 "tokenizer",
                                 "connect_timeout_ms",
                                 "idle_timeout_ms",
                                 "context_length"};
  for (auto& [name, value] : j.items()) {
    bool known = false;
    for (const char* k : kKnown) known = known || name == k;
    if (!known) return Bad("", "unknown field '" + name + "'");
  }
  RAGD_RETURN_IF_ERROR(ReadString(j, "id", "", &e.id));
  if (e.id.empty()) return Bad("", "'id' (the name it is served under) is required");
  UpstreamPoolConfig u;
  RAGD_RETURN_IF_ERROR(ReadUrls(j, e.id, &u.urls));
  u.model = e.id;
  RAGD_RETURN_IF_ERROR(ReadString(j, "model", e.id, &u.model));
  RAGD_RETURN_IF_ERROR(ReadString(j, "api_key_env", e.id, &u.api_key_env));
  RAGD_RETURN_IF_ERROR(ReadInt(j, "concurrency", e.id, 1, 1024, &u.concurrency));
  RAGD_RETURN_IF_ERROR(ReadInt(j, "max_queue", e.id, 0, 1 << 20, &u.max_queue));
  RAGD_RETURN_IF_ERROR(ReadInt(j, "failures_to_open", e.id, 1, 1000, &u.failures_to_open));
  RAGD_RETURN_IF_ERROR(ReadInt(j, "health_interval_ms", e.id, 50, 3600000, &u.health_interval_ms));
  RAGD_RETURN_IF_ERROR(ReadInt(j, "connect_timeout_ms", e.id, 10, 600000, &u.connect_timeout_ms));
  RAGD_RETURN_IF_ERROR(ReadInt(j, "idle_timeout_ms", e.id, 100, 86400000, &u.idle_timeout_ms));
  RAGD_RETURN_IF_ERROR(ReadInt(j, "context_length", e.id, 0, 1 << 24, &u.context_length));
  std::string tokenizer;
  RAGD_RETURN_IF_ERROR(ReadString(j, "tokenizer", e.id, &tokenizer));
  if (tokenizer.empty())
    return Bad(e.id,
               "'tokenizer' (the GGUF file of the model the pool serves) is required: ragd counts tokens "
               "with the model's own vocabulary");
  e.path = resolve(tokenizer);
  e.upstream = std::move(u);
  return e;
}

}  // namespace ragd::app
