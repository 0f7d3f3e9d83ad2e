// `cordon run`: one piece of code, one backend, one outcome, one exit status.
#pragma once

#include "run_options.h"

namespace cordon::cli {

// Runs it; returns cordon's exit status (see exit_status.h).
[[nodiscard]] int run_command(const RunOptions& options);

}  // namespace cordon::cli
