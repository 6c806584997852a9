#include "app/upstream/http_client.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace ragd::app::upstream {
namespace {

constexpr size_t kMaxErrorBody = 64 << 10;

struct Transfer {
  CURL* curl = nullptr;
  const BodySink* sink = nullptr;
  const std::function<bool()>* should_stop = nullptr;
  HttpResult result;
  bool status_known = false;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  if (!t->status_known) {
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    t->result.status = static_cast<int>(status);
    t->status_known = true;
  }
  if (t->result.status < 200 || t->result.status >= 300) {
    const size_t room = kMaxErrorBody - std::min(kMaxErrorBody, t->result.error_body.size());
    t->result.error_body.append(data, std::min(room, bytes));
    return bytes;
  }
  if (!(*t->sink)(std::string_view(data, bytes))) {
    t->result.stopped = true;
    return CURL_WRITEFUNC_ERROR;
  }
  return bytes;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (*t->should_stop && (*t->should_stop)()) {
    t->result.stopped = true;
    return 1;  // aborts the transfer
  }
  return 0;
}

void InitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

Result<HttpResult> Perform(const HttpCall& call, const BodySink& sink,
                           const std::function<bool()>& should_stop) {
  InitOnce();
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return Status::Internal("cannot create an HTTP client handle");
  curl_slist* headers = nullptr;
  for (const std::string& h : call.headers) headers = curl_slist_append(headers, h.c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(headers, curl_slist_free_all);

  Transfer t;
  t.curl = curl.get();
  t.sink = &sink;
  t.should_stop = &should_stop;
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, call.url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  if (!call.body.empty()) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, call.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(call.body.size()));
  }
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: many threads run transfers
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(call.connect_timeout_ms));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(call.total_timeout_ms));
  // No byte for idle_timeout_ms: under 1 byte/s for that long.
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(std::max<int64_t>(1, call.idle_timeout_ms / 1000)));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);

  const CURLcode rc = curl_easy_perform(c);
  if (t.result.stopped) return t.result;
  if (rc != CURLE_OK) return Status::Unavailable(error[0] != '\0' ? error : curl_easy_strerror(rc));
  if (!t.status_known) {
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    t.result.status = static_cast<int>(status);
  }
  return t.result;
}

}  // namespace ragd::app::upstream
