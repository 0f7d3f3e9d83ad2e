// How cordon talks to its subreaper helper (cordon-init reaper, core/libexec/init/reaper_role.cpp):
// the protocol of every process-tree helper (cordon/proc/init_protocol.h) over an AF_UNIX
// SOCK_SEQPACKET pair, one struct per message.
//
// The helper is started per run, so its order is its command line, environment and cwd
// (below), and it starts the code at once.
// helper -> cordon: an Event, kStarted (pid) or kFailed (errno, SpawnStage); then at the
// end one Report, after every descendant was killed and reaped (init_end.h).
// cordon -> helper: any byte means "kill the tree now"; EOF (cordon died or gave up)
// means the same.
#pragma once

#include "cordon/proc/init_protocol.h"

namespace cordon::proc {

// argv of the helper: cordon-init reaper <parent pid> <path> <rlimit count> {<resource> <soft>
// <hard>}... -- <argv of the code>. Its environment and cwd are the code's; its fds 0/1/2
// are the code's stdio and fd 3 the control socket.
inline constexpr int kReaperControlFd = 3;

}  // namespace cordon::proc
