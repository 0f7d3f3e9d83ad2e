// How cordon takes the report of cordon-oci-init (init_protocol.h) off the control socket.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "container_cgroups.h"
#include "cordon/error.h"
#include "cordon/proc/oci_init_channel.h"
#include "cordon/run_driver.h"

namespace cordon::oci {

// The init's own deadline for a run comes this long after cordon's.
inline constexpr std::chrono::milliseconds kInitBackstopMargin{2000};

// Sends `data` (an order, a kEndRun) whole on the init's control socket.
[[nodiscard]] Status send_to_init(int fd, std::string_view data);

// Reads the init's report from `fd`, giving up at `until`. nullopt: the init closed
// without one (it was killed, or died), and the kernel is ending the rest of the
// container. An error: a report that does not say every other process of the container
// was killed and reaped first. Such an init (one from another build) reports while
// orphans may still run and write, so neither its figures nor the cgroup's nor the
// artifacts can be trusted; refusing it keeps the order a checked contract instead of a
// race that a wait on the cgroup would hide.
[[nodiscard]] Result<std::optional<init::Report>> receive_init_report(
    int fd, std::chrono::steady_clock::time_point until);

// The last non-empty line of `text` (a runtime's failure on the container's stderr).
[[nodiscard]] std::string_view last_line(std::string_view text);

// StartedTree::describe_end of a container's run or session call (run_driver.h): how the
// code ended from its init's `report` (nullopt: none came, the init died or was killed) and
// the container's cgroup `stats`; `gvisor`: the runtime is runsc, whose sentry dies when the
// pids group refuses it a thread. An error: the end cannot be told (the init's or the
// runtime's own failure, said in words; the runtime's last stderr line when in result).
[[nodiscard]] Status describe_container_end(const std::optional<init::Report>& report,
                                            const ContainerStats& stats, bool gvisor,
                                            Termination& t, RunResult& result);

}  // namespace cordon::oci
