#include "app/ops/request_log.h"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace ragd::app {
namespace {

using Json = nlohmann::json;

std::string Base64(const unsigned char* data, size_t n) {
  std::string out(sodium_base64_encoded_len(n, sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), data, n, sodium_base64_VARIANT_ORIGINAL);
  out.resize(std::strlen(out.c_str()));
  return out;
}

Result<std::vector<unsigned char>> FromBase64(const std::string& s) {
  std::vector<unsigned char> out(s.size());
  size_t len = 0;
  if (sodium_base642bin(out.data(), out.size(), s.data(), s.size(), nullptr, &len, nullptr,
                        sodium_base64_VARIANT_ORIGINAL) != 0)
    return Status::Corrupt("bad base64");
  out.resize(len);
  return out;
}

Result<std::vector<unsigned char>> KeyFromHex(const std::string& hex) {
  std::vector<unsigned char> key(crypto_secretbox_KEYBYTES);
  size_t len = 0;
  if (hex.size() != 2 * key.size() ||
      sodium_hex2bin(key.data(), key.size(), hex.data(), hex.size(), nullptr, &len, nullptr) != 0 ||
      len != key.size())
    return Status::InvalidArgument("the content key must be 64 hexadecimal characters");
  return key;
}

std::string Day(int64_t unix_s) {
  const time_t t = static_cast<time_t>(unix_s);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

void AppendLine(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const ssize_t ignored = ::write(fd, line.data(), line.size());
  (void)ignored;
  ::close(fd);
}

}  // namespace

Result<std::unique_ptr<RequestLog>> RequestLog::Open(const RequestLogOptions& options) {
  if (sodium_init() < 0) return Status::Internal("libsodium failed to start");
  std::unique_ptr<RequestLog> log(new RequestLog());
  log->options_ = options;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(options.path).parent_path(), ec);
  log->log_fd_ = ::open(options.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log->log_fd_ < 0) return Status::IoError("cannot open the request log " + options.path);
  if (!options.content_dir.empty()) {
    auto key = KeyFromHex(options.content_key_hex);
    if (!key.ok()) return key.status();
    log->key_ = std::move(key).value();
    std::filesystem::create_directories(options.content_dir, ec);
    if (ec) return Status::IoError("cannot create " + options.content_dir + ": " + ec.message());
    log->PurgeExpired(static_cast<int64_t>(::time(nullptr)));
  }
  return log;
}

RequestLog::~RequestLog() {
  if (log_fd_ >= 0) ::close(log_fd_);
  if (!key_.empty()) sodium_memzero(key_.data(), key_.size());
}

void RequestLog::Write(const RequestRecord& r) {
  Json j = {{"time", r.time},
            {"request_id", r.request_id},
            {"user_id", r.user_id},
            {"route", r.route},
            {"status", r.status},
            {"prompt_tokens", r.prompt_tokens},
            {"completion_tokens", r.completion_tokens},
            {"cached_tokens", r.cached_tokens},
            {"ttft_ms", r.ttft_ms >= 0 ? Json(r.ttft_ms) : Json(nullptr)},
            {"duration_ms", r.duration_ms},
            {"finish_reason", r.finish_reason.empty() ? Json(nullptr) : Json(r.finish_reason)},
            {"documents_cited", r.documents_cited}};
  const std::string line = j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";

  std::string sealed_line;
  if (!key_.empty() && (!r.prompt.empty() || !r.answer.empty())) {
    const std::string plain =
        Json{{"prompt", r.prompt}, {"answer", r.answer}}.dump(-1, ' ', false, Json::error_handler_t::replace);
    unsigned char nonce[crypto_secretbox_NONCEBYTES];
    randombytes_buf(nonce, sizeof nonce);
    std::vector<unsigned char> box(plain.size() + crypto_secretbox_MACBYTES);
    crypto_secretbox_easy(box.data(), reinterpret_cast<const unsigned char*>(plain.data()), plain.size(),
                          nonce, key_.data());
    sealed_line = Json{{"request_id", r.request_id},
                       {"time", r.time},
                       {"nonce", Base64(nonce, sizeof nonce)},
                       {"box", Base64(box.data(), box.size())}}
                      .dump() +
                  "\n";
  }

  std::lock_guard<std::mutex> lock(mu_);
  const ssize_t ignored = ::write(log_fd_, line.data(), line.size());
  (void)ignored;
  if (!sealed_line.empty()) {
    AppendLine(options_.content_dir + "/content-" + Day(r.time) + ".jsonl", sealed_line);
    if (r.time - last_purge_ >= 3600) PurgeExpired(r.time);
  }
}

void RequestLog::PurgeExpired(int64_t now) {
  last_purge_ = now;
  const std::string oldest_kept = Day(now - (options_.retention_days - 1) * 86400);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(options_.content_dir, ec)) {
    const std::string name = e.path().filename().string();
    // content-YYYY-MM-DD.jsonl: compare the dates as strings.
    if (name.size() == 24 && name.rfind("content-", 0) == 0 && name.substr(8, 10) < oldest_kept)
      std::filesystem::remove(e.path(), ec);
  }
}

Result<std::string> RequestLog::OpenSealed(const std::string& line, const std::string& key_hex) {
  auto key = KeyFromHex(key_hex);
  if (!key.ok()) return key.status();
  Json j = Json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("nonce") || !j.contains("box"))
    return Status::Corrupt("not a content record");
  auto nonce = FromBase64(j["nonce"].get<std::string>());
  auto box = FromBase64(j["box"].get<std::string>());
  if (!nonce.ok() || !box.ok() || nonce->size() != crypto_secretbox_NONCEBYTES ||
      box->size() < crypto_secretbox_MACBYTES)
    return Status::Corrupt("malformed content record");
  std::string plain(box->size() - crypto_secretbox_MACBYTES, '\0');
  if (crypto_secretbox_open_easy(reinterpret_cast<unsigned char*>(plain.data()), box->data(), box->size(),
                                 nonce->data(), key->data()) != 0)
    return Status::PermissionDenied("wrong key or tampered record");
  return plain;
}

}  // namespace ragd::app
