// Asking systemd for a transient scope with Delegate=yes over D-Bus (libsystemd's sd-bus):
// the supported way for a program that is not the manager to own a cgroup subtree on a
// systemd host (systemd's docs/CGROUP_DELEGATION.md; podman and crun do the same).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "cordon/error.h"

namespace cordon::proc {

// Which manager to ask: the system one (root) or the user's own (`systemctl --user`).
enum class SystemdBus { kSystem, kUser };

// The bus for this process: the system bus as root, the user's bus otherwise.
[[nodiscard]] SystemdBus default_systemd_bus();

// Whether the bus socket of `bus` exists (a prediction: no connection is made).
[[nodiscard]] bool systemd_bus_present(SystemdBus bus);

// StartTransientUnit(unit, "fail") with PIDs=[pid], Delegate=yes and
// CollectMode=inactive-or-failed (the unit goes when its last process does, failed or not),
// then waits until `pid`'s /proc/<pid>/cgroup names the unit or `timeout` passes: the
// method returns once the job is queued, not done. Fails with the bus's error text.
[[nodiscard]] Status start_delegated_scope(SystemdBus bus, const std::string& unit, pid_t pid,
                                           std::chrono::milliseconds timeout);

}  // namespace cordon::proc
