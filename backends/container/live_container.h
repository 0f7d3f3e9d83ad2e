// One container between its creation and its removal, as the backend holds it: its name
// (bundle directory and, prefixed, the runtime's container id and cgroup name) and
// cordon's ends of its stdio and control socket. Its init waits on the control socket for
// the code (a pooled container was started ahead of time).
#pragma once

#include <string>

#include "container_cgroups.h"
#include "cordon/proc/spawn.h"
#include "cordon/unique_fd.h"
#include "instance.h"

namespace cordon::oci {

struct LiveContainer {
  std::string name;
  UniqueFd ctl;  // cordon's end of the init's fd 3
  UniqueFd stdin_write;
  UniqueFd stdout_read;
  UniqueFd stderr_read;
  ContainerCgroups cgroups;  // the parent groups holding the limits and counters
  // An attached runtime (runsc: ContainerBackend::launch()): its foreground `run`, the
  // sandbox's parent, which reaps it and deletes the container when it ends. Empty for a
  // detached one (runc).
  proc::ChildProcess runner;

  [[nodiscard]] std::string id() const { return kContainerPrefix + name; }
};

}  // namespace cordon::oci
