#include "app/services/app_context.h"

namespace ragd::app {

void RecordRequest(AppContext& ctx, const RequestRecord& record) {
  ctx.metrics.CountRequest(record.route, record.status, record.duration_ms / 1000.0);
  if (ctx.request_log) ctx.request_log->Write(record);
}

}  // namespace ragd::app
