#include "frontend/session_probe.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "cordon/cancel.h"
#include "frontend/prompt_render.h"

namespace cordon::frontend {

SessionProbe probe_sessions(Backend& backend, const SessionOptions& options) {
  SessionProbe out;
  Result<std::unique_ptr<BackendSession>> session = backend.open_session(options);
  if (!session) {
    out.refusal = session.error().message;
    return out;
  }
  out.holds = true;
  const std::vector<Language> languages = available_languages(backend);
  if (std::ranges::find(languages, Language::kPython) == languages.end()) return out;
  const CancelSource never;
  RunRequest call;
  call.language = Language::kPython;
  call.limits = options.base.limits;
  // Generous: an interpreter's first start on a loaded machine, not the code, takes the time.
  call.timeout = std::chrono::seconds(30);
  call.code = "x = 41";
  const RunResult first = (*session)->run(call, never.token(), nullptr);
  if (first.outcome != Outcome::kOk) return out;
  call.code = "x + 1";
  const RunResult second = (*session)->run(call, never.token(), nullptr);
  out.keeps_python = second.outcome == Outcome::kOk && second.value == "42";
  return out;
}

}  // namespace cordon::frontend
