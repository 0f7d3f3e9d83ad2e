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
  // namespace, container: an environment's directory (cordon environment add, --rootfs),
  // shown as the sandbox's /usr, /bin, /lib* instead of the host's. Resolved and pinned
  // by the front end (frontend/environment.h); a backend that cannot show it refuses.
  std::optional<std::string> system_root;
  // Its content digest ("sha256:..."), as the front end pinned it: the backend states it in
  // its filesystem claim, so the policy hash, and with it every audit report and tool
  // description, is bound to the environment's contents, not to its path.
  std::optional<std::string> system_root_digest;
  // container: the gVisor platform runsc's sandboxes run on ("ptrace", "kvm"), one the
  // installed runsc lists; wins over $CORDON_RUNSC_PLATFORM. Used by the runsc runtime only.
  std::optional<std::string> runsc_platform;
};

}  // namespace cordon
