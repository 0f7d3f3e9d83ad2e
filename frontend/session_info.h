// What a front end shows of one live session (issue #41): `cordon session ls`, the MCP
// session tools and the inspector's session panel. Apart from the registry so that a front
// end that holds its session itself (the inspector's Run tab) says the same figures without
// depending on the registry.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "cordon/session.h"

namespace cordon::frontend {

struct SessionInfo {
  std::string id;
  std::string backend;      // backend_label(): "container (runsc)"
  std::string environment;  // "host" unless the session's request named one
  std::chrono::milliseconds age{0};
  std::chrono::milliseconds idle{0};  // since the last call ended (or it was opened)
  std::int64_t calls = 0;
  bool busy = false;                  // a call or file operation runs now
  std::size_t waiting = 0;            // calls queued behind it
  std::optional<SessionStats> stats;  // the backend's; unset while busy
};

}  // namespace cordon::frontend
