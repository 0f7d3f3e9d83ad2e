// `cordon prompt`: prints the run_code tool definition for a backend, in the shape one
// ecosystem expects, stating only what the stored audit report for this backend, host
// and policy proves (auditing first when there is no such report).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cordon/error.h"
#include "cordon/request.h"

namespace cordon::cli {

struct PromptOptions {
  std::string backend = "auto";
  std::optional<std::string> timeout;    // DUR
  std::optional<std::string> memory;     // SIZE
  std::optional<std::string> processes;  // N
  std::optional<int> version;            // the template version; latest when unset
  std::string id = "run_code";
  std::string format = "text";
  bool unverified = false;  // render unproven claims marked "[unverified]"
  bool no_audit = false;    // never run an audit: without a report, claims are unproven
};

[[nodiscard]] int prompt_command(const PromptOptions& options);

// "run_code@1" -> {run_code, 1}, checked against the built-in templates: a result never
// records a description that does not exist.
[[nodiscard]] Result<ToolDescriptionRef> parse_tool_description_ref(std::string_view text);

}  // namespace cordon::cli
