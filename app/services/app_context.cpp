#include "app/services/app_context.h"

#include <ctime>

namespace ragd::app {

LanguageModel* FindLlm(AppContext& ctx, std::string_view id) {
  for (auto& m : ctx.llms)
    if (m->id == id) return m.get();
  return nullptr;
}

void RecordRequest(AppContext& ctx, const RequestRecord& record) {
  ctx.metrics.CountRequest(record.route, record.status, record.duration_ms / 1000.0);
  if (ctx.request_log) ctx.request_log->Write(record);
}

RequestRecord RequestRecordOf(const std::string& request_id, int64_t user_id, const std::string& route) {
  RequestRecord r;
  r.request_id = request_id;
  r.user_id = user_id;
  r.route = route;
  return r;
}

void RecordDeferred(AppContext& ctx, RequestRecord record, int status,
                    std::chrono::steady_clock::time_point started) {
  record.time = static_cast<int64_t>(::time(nullptr));
  record.status = status;
  record.duration_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  RecordRequest(ctx, record);
}

}  // namespace ragd::app
