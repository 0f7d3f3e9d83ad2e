// Whether a backend holds sessions here, and what it keeps across a session's calls (issue
// #41), found by doing it once: a trial session opened, and for python two calls, `x = 41`
// then `x + 1`. What the session tools are offered on and say (prompts/session_facts.h): a
// description states that python variables persist only where this saw them persist.
#pragma once

#include <string>

#include "cordon/backend.h"
#include "cordon/session.h"

namespace cordon::frontend {

struct SessionProbe {
  bool holds = false;   // a session opened
  std::string refusal;  // why not, when it did not
  bool keeps_python = false;
};

// `options` as the server opens its sessions (their language is not read: the trial calls
// are python where the backend runs it, available_languages()). The trial session is closed
// before this returns.
[[nodiscard]] SessionProbe probe_sessions(Backend& backend, const SessionOptions& options);

}  // namespace cordon::frontend
