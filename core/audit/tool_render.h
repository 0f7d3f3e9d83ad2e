// Fills a tool-description template from a backend's capabilities and effective limits,
// stating only what the matching audit report proves.
//
// Each sentence belongs to one aspect. A sentence that says something is stopped (no
// network, no host files, a memory limit, ...) is a claim: it is rendered when every
// audit attempt on that aspect was BLOCKED; refused with an error naming the attempt when
// one ESCAPED; and, when unproven (no report, attempts skipped or unjudged), refused —
// or, with `unverified`, rendered marked "[unverified]". A sentence that says something
// is NOT stopped needs no proof: a backend without network isolation can only say so.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "audit/report.h"
#include "audit/tool_description.h"
#include "cordon/capabilities.h"
#include "cordon/request.h"

namespace cordon::audit {

inline constexpr std::string_view kUnverifiedMark = "[unverified] ";

struct RenderContext {
  std::string backend_name;
  Capabilities capabilities;  // for the effective limits
  std::chrono::milliseconds timeout{kDefaultTimeout};
  std::vector<Language> languages;      // available on this host
  const AuditReport* report = nullptr;  // null: nothing is proven
  bool unverified = false;
};

struct RenderedTool {
  std::string id;
  int version = 0;
  std::string name;
  std::string description;
  nlohmann::json input_schema;
};

[[nodiscard]] Result<RenderedTool> render_tool(const ToolTemplate& tool,
                                               const RenderContext& context);

// Whether the report proves the claims on `aspect`: "" when proven, else why not.
// `contradicted` is set when an attempt escaped.
[[nodiscard]] std::string unproven_reason(const AuditReport* report, Aspect aspect,
                                          bool* contradicted);

}  // namespace cordon::audit
