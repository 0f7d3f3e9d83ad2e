// cordon's end of the container init's control channel (cordon/proc/oci_init_channel.h): the
// one-shot listener in the bundle's code/ directory, seen in the container at
// /.cordon/init.sock, and the wait for the init's connection.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>

#include "cordon/error.h"
#include "cordon/unique_fd.h"

namespace cordon::oci {

// A listening AF_UNIX stream socket at `path` that the container's init (uid 65534 under
// runc; runsc's gofer, root, connects for its sandbox) may connect to.
[[nodiscard]] Result<UniqueFd> listen_for_init(const std::filesystem::path& path);

// The init's one connection, waited for until `until`; the listener is closed and its file
// removed before anything else reaches the container, so the code, which runs only after
// the order, can never connect to it. `runner`: an attached runtime's pidfd (or -1); its
// exit before the init connected is the runtime's failure, said at once.
//
// The peer is checked (SO_PEERCRED) before it is taken: `is_container_process(pid)` must say
// the connecting process (its pid as seen here) belongs to the container — the backend asks
// whether the container's own cgroup lists it, which holds for runc's init and for runsc's
// gofer alike, while uids differ between runtimes (65534, 0) and the PID namespace hides the
// init's pid 1. A peer that is not (another process that reached the socket) is refused:
// its connection closed, and the wait goes on for the init; the timeout's error names it.
[[nodiscard]] Result<UniqueFd> accept_init(UniqueFd listener, const std::filesystem::path& path,
                                           std::chrono::steady_clock::time_point until, int runner,
                                           const std::function<bool(pid_t)>& is_container_process);

}  // namespace cordon::oci
