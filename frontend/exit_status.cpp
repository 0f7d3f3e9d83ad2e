#include "frontend/exit_status.h"

#include <chrono>
#include <csignal>
#include <cstring>

#include "cordon/units.h"

namespace cordon::frontend {

int exit_status(const RunResult& result, int cancel_signal) {
  switch (result.outcome) {
    case Outcome::kOk:
      return 0;
    case Outcome::kFailed: {
      // exit_code is the low 8 bits of the status already; mask in case a backend
      // reports something else, and never let a failure look like success.
      const int code = result.exit_code > 0 ? (result.exit_code & 0xff) : 0;
      return code != 0 ? code : 1;
    }
    case Outcome::kSignaled:
      return kExitSignalBase + result.signal;
    case Outcome::kTimedOut:
      return kExitTimedOut;
    case Outcome::kLimitExceeded:
      return kExitLimitExceeded;
    case Outcome::kCancelled:
      return cancel_signal > 0 ? kExitSignalBase + cancel_signal : kExitCancelledDefault;
    case Outcome::kSandboxError:
      return kExitCordonFailed;
  }
  return kExitCordonFailed;
}

std::string signal_name(int signal) {
  // sigabbrev_np (glibc 2.32) gives the short name, never localised, unlike strsignal().
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

namespace {

std::string backend_tag(const RunResult& result) {
  // "[container 0.1.0 (runsc)]": the variant after the version, as the lists name it.
  std::string tag = " [" + result.backend.name;
  if (!result.backend.version.empty()) tag += " " + result.backend.version;
  if (!result.backend.variant.empty()) tag += " (" + result.backend.variant + ")";
  return tag + "]";
}

std::string elapsed(const RunResult& result) {
  return format_duration(std::chrono::milliseconds(result.wall_ms));
}

std::string truncation_note(const RunResult& result) {
  std::string note;
  if (result.stdout_truncated) note += "; stdout truncated";
  if (result.stderr_truncated) note += "; stderr truncated";
  return note;
}

std::string describe_outcome(const RunResult& result) {
  switch (result.outcome) {
    case Outcome::kOk:
      return "ok (exit 0) in " + elapsed(result);
    case Outcome::kFailed:
      return "failed (exit " + std::to_string(result.exit_code) + ") in " + elapsed(result);
    case Outcome::kSignaled:
      return "killed by signal " + std::to_string(result.signal) + " (" +
             signal_name(result.signal) + ") after " + elapsed(result);
    case Outcome::kTimedOut:
      return "timed out after " + elapsed(result);
    case Outcome::kLimitExceeded: {
      const std::string limit = result.limit ? std::string(to_string(*result.limit)) : "a";
      return limit + " limit exceeded after " + elapsed(result) +
             (result.oom_killed ? " (OOM killed)" : "");
    }
    case Outcome::kCancelled:
      return "cancelled after " + elapsed(result);
    case Outcome::kSandboxError:
      return "sandbox error: " + result.error.value_or("no reason given");
  }
  return "unknown outcome";
}

}  // namespace

std::string status_line(const RunResult& result) {
  return describe_outcome(result) + truncation_note(result) + backend_tag(result);
}

}  // namespace cordon::frontend
