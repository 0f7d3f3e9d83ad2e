// `cordon prompt`: prints the run_code tool definition for a backend, in the shape one
// ecosystem expects, stating only what the stored audit report for this backend, host
// and policy proves (auditing first when there is no such report; frontend/prompt_render.h).
#pragma once

#include "frontend/prompt_render.h"
#include "frontend_names.h"

namespace cordon::cli {

using frontend::PromptOptions;

[[nodiscard]] int prompt_command(const PromptOptions& options);

}  // namespace cordon::cli
