#include "app/services/app_context.h"

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

}  // namespace ragd::app
