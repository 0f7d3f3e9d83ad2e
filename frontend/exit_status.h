// How a run's outcome becomes cordon's exit status and its one-line status on stderr.
//
//   ok / failed        the code's own exit status (0..255)
//   timed_out          124 (as timeout(1))
//   signaled           128 + N for signal N (as a shell reports it)
//   limit_exceeded     137 for every limit (128 + SIGKILL: what a shell shows for a
//                      process the OOM killer or a cgroup kill stopped); the status line
//                      and JSON `limit` say which ceiling was hit
//   cancelled          128 + the signal cordon received (130 SIGINT, 143 SIGTERM,
//                      129 SIGHUP); 130 if cancelled otherwise
//   sandbox_error      125, as for every failure of cordon itself (bad arguments,
//                      unknown or unavailable backend, artifacts that cannot be written)
#pragma once

#include <string>

#include "cordon/result.h"

namespace cordon::frontend {

inline constexpr int kExitCordonFailed = 125;
inline constexpr int kExitTimedOut = 124;
inline constexpr int kExitLimitExceeded = 137;
inline constexpr int kExitSignalBase = 128;
inline constexpr int kExitCancelledDefault = 130;

// `cancel_signal` is the signal that made cordon cancel the run, 0 if none.
[[nodiscard]] int exit_status(const RunResult& result, int cancel_signal = 0);

// "SIGSEGV", or "signal 99" for numbers without a name.
[[nodiscard]] std::string signal_name(int signal);

// "ok (exit 0) in 12 ms [subprocess 0.1.0]", "timed out after 200 ms [subprocess 0.1.0]",
// "sandbox error: ..." — without the "cordon: " prefix.
[[nodiscard]] std::string status_line(const RunResult& result);

}  // namespace cordon::frontend
