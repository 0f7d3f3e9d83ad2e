// One container between its creation and its removal, as the backend holds it: its name
// (bundle directory and, prefixed, the runtime's container id and cgroup name) and
// cordon's ends of its stdio and control socket. A cold run also owns the foreground
// `runc run` process; a pooled container was created and started ahead of time and its
// init waits on the control socket for the code.
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
  proc::ChildProcess foreground;  // cold runs: `runc run`; empty for pooled containers
  ContainerCgroups cgroups;       // the parent groups holding the limits and counters
  bool runtime_done = false;      // the runtime deleted the container itself (`run` exited)

  [[nodiscard]] std::string id() const { return kContainerPrefix + name; }
};

}  // namespace cordon::oci
