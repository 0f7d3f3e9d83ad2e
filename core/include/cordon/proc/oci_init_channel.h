// How cordon talks to cordon-oci-init (PID 1 inside each container): the protocol of every
// process-tree helper (cordon/proc/init_protocol.h) over one AF_UNIX stream socket, the
// init's fd 3.
//
// The channel (issue #18): cordon listens on kInitSocketName in the bundle's code/
// directory, which every container sees read-only at /.cordon, and the init, started as
// `cordon-init oci --connect /.cordon/init.sock`, connects to it before anything else and
// moves the connection to fd 3. cordon accepts exactly one connection from a process of the
// container (SO_PEERCRED: its cgroup lists the peer; any other peer is refused), then closes the
// listener and unlinks its file before it sends the order, so no code ever runs while the
// socket can be reached. One channel for every runtime: runc could pass an inherited fd
// (`--preserve-fds`), gVisor's runsc (release 2022-12-19) cannot, but lets the sandbox
// connect to a host socket bound into it (`--host-uds=open`, through its gofer).
//
// cordon -> init: an OrderHeader of kind kRun, then its `size` bytes of records inline:
//   kExe, kArg…, kEnv…, kBackstop (the runtime gives the stdio, the config the cwd and
//   rlimits, the bundle the files). Later, any byte means "stop now"; EOF (cordon died or
//   gave up) means the same.
// init -> cordon: one Report when the code's main process has ended and the init has
//   killed and reaped every other process of the container (init_end.h; cordon refuses a
//   report without everything_reaped, init_report.h).
//
// A session (issue #41): a first order of kind kSessionRun puts the init in session mode. For
// each call it first connects to kCallStdinPath, kCallStdoutPath and kCallStderrPath, in that
// order, before the call's code exists (cordon listens there from before it sends the order
// and accepts the first connection of each from a process of the container, then closes and
// unlinks the listener); the three are the code's fds 0-2. The call ends when its main
// process ends, at a kEndRun header from cordon, or at its backstop: every other process of
// the container is killed and reaped, the report goes back, and the init waits for the next
// kSessionRun (skipping a kEndRun that crossed the call's end). EOF, or anything else,
// ends the init and the container with it.
//
// The order arrives after the container started, so a container created ahead of time
// (the warm pool) does not know its code until a run takes it.
#pragma once

#include <cstdint>

#include "cordon/proc/init_protocol.h"

namespace cordon::oci {

inline constexpr int kInitControlFd = 3;
// The listener's name in the bundle's code/ directory, and the init's argument before its
// path inside the container.
inline constexpr const char* kInitSocketName = "init.sock";
inline constexpr const char* kInitConnectFlag = "--connect";
// A session call's stdio listeners: their names in the bundle's code/ directory, and the
// paths the init connects to (the directory is seen at /.cordon).
inline constexpr const char* kCallStdinName = "call-in.sock";
inline constexpr const char* kCallStdoutName = "call-out.sock";
inline constexpr const char* kCallStderrName = "call-err.sock";
inline constexpr const char* kCallStdinPath = "/.cordon/call-in.sock";
inline constexpr const char* kCallStdoutPath = "/.cordon/call-out.sock";
inline constexpr const char* kCallStderrPath = "/.cordon/call-err.sock";
// Bounds the init applies to the order it reads (the code itself travels in argv or a
// file).
inline constexpr std::uint32_t kInitMaxOrderBytes = 8U << 20;

}  // namespace cordon::oci
