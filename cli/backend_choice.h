// Which backend runs the code: the pure decision behind `--backend`, kept free of plugins
// so it can be unit-tested with hand-made candidates.
//
// `auto` picks the most isolating available backend and fails closed: it never falls back
// silently to a backend that does not isolate. Naming a backend explicitly, or passing
// --allow-unisolated, is the user's informed choice to run without isolation.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cordon/capabilities.h"
#include "cordon/error.h"

namespace cordon::cli {

inline constexpr std::string_view kAutoBackend = "auto";

// One plugin as the chooser sees it: loaded or not, probed, with its capabilities.
struct BackendCandidate {
  std::string name;
  std::string version;
  bool available = false;
  std::string reason;  // why not available (failed to load, probe said no); may be empty
  Capabilities capabilities;
};

struct BackendChoice {
  std::string name;
  bool isolates = false;
};

// `requested` is a backend name or "auto". Errors (ErrorCode kNotFound / kUnavailable)
// carry a one-line message that names the problem and the backends available here.
[[nodiscard]] Result<BackendChoice> choose_backend(const std::vector<BackendCandidate>& candidates,
                                                   std::string_view requested,
                                                   bool allow_unisolated);

// "subprocess, namespace" or "none".
[[nodiscard]] std::string available_backend_list(const std::vector<BackendCandidate>& candidates);

// The isolation aspects a backend does not fully enforce: "network, filesystem".
[[nodiscard]] std::string missing_isolation(const Capabilities& capabilities);

}  // namespace cordon::cli
