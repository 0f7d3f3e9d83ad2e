// How cordon talks to cordon-oci-init (PID 1 inside each container): the protocol of every
// process-tree helper (cordon/proc/init_protocol.h) over one AF_UNIX stream socket that
// the runtime passes to the container as fd 3 (`--preserve-fds 1`).
//
// cordon -> init: an OrderHeader of kind kRun, then its `size` bytes of records inline:
//   kExe, kArg…, kEnv…, kBackstop (the runtime gives the stdio, the config the cwd and
//   rlimits, the bundle the files). Later, any byte means "stop now"; EOF (cordon died or
//   gave up) means the same.
// init -> cordon: one Report when the code's main process has ended and the init has
//   killed and reaped every other process of the container (init_end.h; cordon refuses a
//   report without everything_reaped, init_report.h).
//
// The order arrives after the container started, so a container created ahead of time
// (the warm pool) does not know its code until a run takes it.
#pragma once

#include <cstdint>

#include "cordon/proc/init_protocol.h"

namespace cordon::oci {

inline constexpr int kInitControlFd = 3;
// Bounds the init applies to the order it reads (the code itself travels in argv or a
// file).
inline constexpr std::uint32_t kInitMaxOrderBytes = 8U << 20;

}  // namespace cordon::oci
