// `cordon session start|run|ls|cp|reset|stop` (issue #41): a session's sandbox kept across
// separate invocations of `cordon`, held by a small process per session (session_holder.h).
#pragma once

#include <optional>
#include <string>

#include "run_options.h"

namespace cordon::cli {

enum class SessionVerb { kStart, kRun, kList, kCopy, kReset, kStop };

struct SessionCommandOptions {
  SessionVerb verb = SessionVerb::kList;
  // start: the backend, language, limits, env, allow-list and environment, fixed for the
  // session's life; run: the code (-c, FILE or -), timeout, language, stdin, output cap.
  RunOptions run;
  std::string id;                        // run, reset, stop
  std::string from;                      // cp: ID:PATH or a local path
  std::string to;                        // cp
  std::optional<std::string> idle;       // start --idle DUR (default 10m)
  std::optional<std::string> max_age;    // start --max-age DUR (default 1h)
  std::optional<std::string> workspace;  // start --workspace SIZE (default 256M)
};

[[nodiscard]] int session_command(const SessionCommandOptions& options);

}  // namespace cordon::cli
