// A backend's own settings, chosen by whoever creates it (flags of `cordon run`, `plan`,
// `prompt`, `audit`, `mcp`; the inspector), handed to the plugin when it is created.
// An unset field keeps the backend's default (or its environment variable, for the
// plugins that read one). A backend that has no such setting ignores it; one that has it
// and cannot honour the value fails creation with the reason.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace cordon {

struct BackendOptions {
  // Sandboxes built ahead of time for the default limits (namespace, container). 0: none.
  std::optional<std::size_t> pool_size;
  std::optional<std::string> engine;   // container: "podman" hands runs to an engine
  std::optional<std::string> image;    // container engine mode: the image
  std::optional<std::string> runtime;  // container: the OCI runtime ("runc")
  // namespace: the interpreter its pooled sandboxes start ahead ("python"), or "none".
  // Pooled python calls then skip interpreter start-up (docs/ARCHITECTURE.md, "Python
  // started ahead"). Needs a pool.
  std::optional<std::string> prestart;
};

}  // namespace cordon
