// `cordon plan` and `cordon run --dry-run`: the plan a run would apply, printed, and
// nothing run.
#pragma once

#include "run_options.h"

namespace cordon::cli {

// Builds the request from `options` (code optional: none means an empty script), chooses
// the backend exactly as `cordon run` does (auto fails closed, --allow-unisolated), and
// prints its plan: one JSON object on stdout with --json, else text (plan_text.h).
// Returns 0, or kExitCordonFailed (125) when any of that fails.
[[nodiscard]] int plan_command(const RunOptions& options);

}  // namespace cordon::cli
