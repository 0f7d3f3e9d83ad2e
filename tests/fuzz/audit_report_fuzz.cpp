// Stored audit reports ($CORDON_AUDIT_DIR/<backend>-<digest>.json): any process of the
// user can write there, and a report decides which isolation claims a tool description
// states. The bytes are parsed as JSON and read with report_from_json(); a report it
// accepts is rendered into the run_code description, where every claim is checked
// against its verdicts. Properties: nothing throws (interpreters_from_json() promises to
// skip what it cannot read); an accepted report round-trips through to_json() unchanged;
// rendering with it either succeeds or says why not.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "audit/report.h"
#include "fuzz_util.h"
#include "prompts/tool_description.h"
#include "prompts/tool_render.h"

namespace {

using namespace cordon;
using cordon::fuzz::require;
using nlohmann::json;

bool same(const audit::AuditReport& a, const audit::AuditReport& b) {
  if (!(a.binding == b.binding) || a.host_summary != b.host_summary ||
      a.created_at != b.created_at || a.complete != b.complete ||
      a.interpreters != b.interpreters || a.verdicts.size() != b.verdicts.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.verdicts.size(); ++i) {
    const audit::AttemptVerdict& x = a.verdicts[i];
    const audit::AttemptVerdict& y = b.verdicts[i];
    if (x.id != y.id || x.threat_class != y.threat_class || x.aspect != y.aspect ||
        x.claimed != y.claimed || x.status != y.status || x.evidence != y.evidence ||
        x.control != y.control || x.duration_ms != y.duration_ms) {
      return false;
    }
  }
  return true;
}

// Every aspect enforced: each claim of the description then rests on the report.
Capabilities claiming_everything() {
  Capabilities caps;
  for (const Aspect aspect : kAllAspects) {
    caps.aspects.push_back(capability(aspect, Enforcement::kEnforced, "fuzz", "1", ""));
  }
  return caps;
}

void render_with(const audit::AuditReport& report) {
  static const auto tool = prompts::find_template("run_code", std::nullopt);
  require(tool.has_value());
  for (const bool unverified : {false, true}) {
    const prompts::RenderContext ctx{.backend_name = "fuzz",
                                     .capabilities = claiming_everything(),
                                     .timeout = std::chrono::seconds(5),
                                     .languages = {Language::kPython, Language::kSh},
                                     .report = &report,
                                     .unverified = unverified};
    const auto rendered = prompts::render_tool(*tool, ctx);
    if (!rendered) require(!rendered.error().message.empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  (void)audit::interpreters_from_json(j);
  if (j.is_object() && j.contains("interpreters")) {
    (void)audit::interpreters_from_json(j["interpreters"]);
  }
  const Result<audit::AuditReport> report = audit::report_from_json(j);
  if (!report) {
    require(!report.error().message.empty());
    return 0;
  }
  (void)audit::audit_exit_status(report->verdicts);
  const json out = audit::to_json(*report);
  (void)out.dump();
  const Result<audit::AuditReport> again = audit::report_from_json(out);
  require(again.has_value() && same(*report, *again));
  render_with(*report);
  return 0;
}
