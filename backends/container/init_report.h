// How cordon takes the report of cordon-oci-init (init_protocol.h) off the control socket.
#pragma once

#include <chrono>
#include <optional>

#include "cordon/error.h"
#include "cordon/proc/oci_init_channel.h"

namespace cordon::oci {

// Reads the init's report from `fd`, giving up at `until`. nullopt: the init closed
// without one (it was killed, or died), and the kernel is ending the rest of the
// container. An error: a report that does not say every other process of the container
// was killed and reaped first. Such an init (one from another build) reports while
// orphans may still run and write, so neither its figures nor the cgroup's nor the
// artifacts can be trusted; refusing it keeps the order a checked contract instead of a
// race that a wait on the cgroup would hide.
[[nodiscard]] Result<std::optional<init::Report>> receive_init_report(
    int fd, std::chrono::steady_clock::time_point until);

}  // namespace cordon::oci
