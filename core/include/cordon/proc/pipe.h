// CLOEXEC pipes and socket pairs for talking to child processes.
//
// Every fd cordon makes is O_CLOEXEC: several runs may spawn at once on different
// threads, and an fd without CLOEXEC would leak into whichever child execs next (a leaked
// write end of another run's stdout pipe would keep that run from ever seeing EOF).
// Children get exactly the fds spawn() maps onto 0/1/2 (and any it is told to keep).
#pragma once

#include "cordon/error.h"
#include "cordon/unique_fd.h"

namespace cordon::proc {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// pipe2(O_CLOEXEC | extra_flags).
[[nodiscard]] Result<Pipe> make_pipe(int extra_flags = 0);

// A connected AF_UNIX SOCK_SEQPACKET pair (message boundaries kept), both ends CLOEXEC.
[[nodiscard]] Result<Pipe> make_seqpacket_pair();

// Sets or clears O_NONBLOCK on `fd`.
[[nodiscard]] Status set_nonblocking(int fd, bool on = true);

}  // namespace cordon::proc
