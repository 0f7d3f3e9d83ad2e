// `cordon prompt`: prints the run_code tool definition for a backend, in the shape one
// ecosystem expects, stating only what the stored audit report for this backend, host
// and policy proves (auditing first when there is no such report; frontend/prompt_render.h).
#pragma once

#include "frontend/prompt_render.h"
#include "frontend_names.h"
#include "run_options.h"

namespace cordon::cli {

using frontend::PromptOptions;

// `network_flags`: the allow-list the description states (--allow-net ...); none by default.
// `environment_flags`: the environment it describes (--environment, --rootfs); the host's.
[[nodiscard]] int prompt_command(const PromptOptions& given, const NetworkFlags& network_flags = {},
                                 const EnvironmentFlags& environment_flags = {});

}  // namespace cordon::cli
