// `cordon run`: one piece of code, one backend, one outcome, one exit status.
#pragma once

#include <chrono>

#include "cordon/backend.h"
#include "cordon/request.h"
#include "cordon/result.h"
#include "run_options.h"

namespace cordon::cli {

// Runs it; returns cordon's exit status (see exit_status.h).
[[nodiscard]] int run_command(const RunOptions& options);

// Runs `request` on `backend`, its output passed through live unless `json`, cancelled
// on SIGINT/SIGTERM/SIGHUP; *cancel_signal is the signal that cancelled it, else 0.
[[nodiscard]] RunResult execute(Backend& backend, const RunRequest& request, bool json,
                                int* cancel_signal);

// Records the finished run in the history (source "cli"); a failure is a warning line.
void record_in_history(const RunRequest& request, const RunResult& result,
                       std::chrono::system_clock::time_point started);

}  // namespace cordon::cli
