// A backend's plan as the front ends show it (`cordon plan`, the inspector's Plan tab): the
// plugin's JSON answer read by plan_from_json (cordon/plan.h), completed with a backend's
// capabilities and rendered as text (frontend/plan_text.h). A plugin's plan is outside
// input. Properties: nothing throws; the text ends with a newline and names the backend;
// completion keeps a plan readable (its JSON form reads back).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cordon/plan.h"
#include "frontend/plan_text.h"
#include "fuzz_util.h"

namespace {

using cordon::fuzz::require;
using nlohmann::json;

cordon::Capabilities some_capabilities() {
  cordon::Capabilities caps;
  for (const cordon::Aspect aspect : cordon::kAllAspects) {
    caps.aspects.push_back(cordon::capability(aspect, cordon::Enforcement::kPartial, "fuzz",
                                              std::nullopt, "", cordon::LimitRange{1, 1U << 30}));
  }
  return caps;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const json in = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded()) return 0;
  cordon::Result<cordon::Plan> plan = cordon::plan_from_json(in);
  if (!plan) return 0;
  const std::string text = cordon::frontend::render_plan_text(*plan);
  require(text.starts_with("plan of backend " + plan->backend_name));
  require(text.ends_with("\n"));
  cordon::RunRequest request;
  const cordon::Plan full = cordon::frontend::complete_plan(*plan, request, some_capabilities());
  require(full.aspects.has_value() && full.isolates.has_value());
  require(cordon::plan_from_json(cordon::to_json(full)).has_value());
  require(cordon::frontend::render_plan_text(full).ends_with("\n"));
  return 0;
}
