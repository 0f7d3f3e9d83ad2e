// Which backend runs the code: the pure decision behind `--backend`, kept free of plugins
// so it can be unit-tested with hand-made candidates.
//
// `auto` picks the strongest available backend and fails closed: it never falls back
// silently to a backend that does not isolate. Naming a backend explicitly, or passing
// --allow-unisolated, is the user's informed choice to run without isolation.
//
// Strength, compared in this order: the isolation aspects (network, filesystem,
// environment, process tree) fully enforced, then all aspects fully enforced. A partial
// enforcement (a per-process rlimit, a CPU bandwidth share) counts for nothing: it is not
// a bound the caller can rely on. Equally strong backends are taken in a fixed order,
// kAutoOrder, then by name: the choice never depends on the order plugins are found in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cordon/capabilities.h"
#include "cordon/error.h"

namespace cordon::frontend {

inline constexpr std::string_view kAutoBackend = "auto";
// Among equally strong backends: namespace first (a run costs a few ms; the container
// backend's ~90 ms are runc's), then container; any other by name after these.
inline constexpr std::string_view kAutoOrder[] = {"namespace", "container"};

// One plugin as the chooser sees it: loaded or not, probed, with its capabilities.
struct BackendCandidate {
  std::string name;  // as lists show it: "namespace", "container (runsc)" (backend_label())
  std::string version;
  bool available = false;
  std::string reason;  // why not available (failed to load, probe said no); may be empty
  Capabilities capabilities;
  // The plugin's name when `name` is a variant's label ("container"): `-b container` with
  // `--runtime runsc` names the one entry that plugin made. Empty: the same as `name`.
  std::string plugin{};  // NOLINT(readability-redundant-member-init): g++'s missing-initializer
  // A variant (Probe::variant, e.g. gVisor): chosen only when named, never by `auto`, which
  // keeps choosing among the kernel-sharing backends by cost.
  bool opt_in = false;
};

struct BackendChoice {
  std::string name;
  bool isolates = false;
  // Why this backend, for people: "auto chose namespace: enforces all 4 isolation
  // aspects, 10 of 11 aspects in all; container is equally strong, and namespace comes
  // first in the fixed order (namespace, container, then by name)".
  std::string reason;
};

// `requested` is a backend name (a label, or a plugin's name when that plugin made a single
// entry) or "auto". Errors (ErrorCode kNotFound / kUnavailable)
// carry a one-line message that names the problem and the backends available here.
[[nodiscard]] Result<BackendChoice> choose_backend(const std::vector<BackendCandidate>& candidates,
                                                   std::string_view requested,
                                                   bool allow_unisolated);

// "subprocess, namespace" or "none".
[[nodiscard]] std::string available_backend_list(const std::vector<BackendCandidate>& candidates);

// The isolation aspects a backend does not fully enforce: "network, filesystem".
[[nodiscard]] std::string missing_isolation(const Capabilities& capabilities);

}  // namespace cordon::frontend
