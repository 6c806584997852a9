#include "app/services/model_routing.h"

namespace ragd::app {

LanguageModel& FastLlm(AppContext& ctx) {
  if (LanguageModel* m = FindLlm(ctx, ctx.config.rag.fast_model)) return *m;
  return ctx.llms.size() > 1 ? *ctx.llms[1] : *ctx.llms.front();
}

Result<ModelChoice> ChooseModel(AppContext& ctx, const std::optional<std::string>& name) {
  ModelChoice c;
  c.requested = name.value_or(DefaultLlm(ctx).id);
  if (c.requested == kRagFastModelId) {
    c.llm = &FastLlm(ctx);
    c.rag = true;
  } else if (c.requested == kRagModelId) {
    c.llm = &DefaultLlm(ctx);
    c.rag = true;
    const int64_t bound = ctx.config.rag.fallback_waiting;
    // The fast model also answers while every endpoint of the answer model's pool is unreachable.
    if ((bound > 0 && static_cast<int64_t>(c.llm->generator->waiting()) >= bound) ||
        !c.llm->generator->Health().ok())
      c.llm = &FastLlm(ctx);
  } else {
    c.llm = FindLlm(ctx, c.requested);
    if (c.llm == nullptr)
      return Status::NotFound("model '" + c.requested + "' does not exist; see GET /v1/models");
  }
  return c;
}

}  // namespace ragd::app
