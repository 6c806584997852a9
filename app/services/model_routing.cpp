#include "app/services/model_routing.h"

namespace ragd::app {

size_t FastLlmIndex(const std::vector<std::string>& ids, std::string_view fast_model) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == fast_model) return i;
  return ids.size() > 1 ? 1 : 0;
}

LanguageModel& FastLlm(AppContext& ctx) {
  std::vector<std::string> ids;
  for (const auto& m : ctx.llms) ids.push_back(m->id);
  return *ctx.llms[FastLlmIndex(ids, ctx.config.rag.fast_model)];
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
