// CLOEXEC pipes and socket pairs for talking to child processes.
//
// Every fd cordon makes is O_CLOEXEC: several runs may spawn at once on different
// threads, and an fd without CLOEXEC would leak into whichever child execs next (a leaked
// write end of another run's stdout pipe would keep that run from ever seeing EOF).
// Children get exactly the fds spawn() maps onto 0/1/2 (and any it is told to keep).
#pragma once

#include <sys/types.h>

#include <cstddef>

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

// write(2) on a pipe whose reader may be gone, without SIGPIPE: cordon is a library, and
// an embedder (a server, the inspector) may rely on SIGPIPE's default disposition, so it
// never changes the process-wide one. SIGPIPE is blocked in the calling thread only for
// the write; one the write raised (it is directed at this thread) is consumed with
// sigtimedwait before the mask is restored, unless one was already pending. Returns what
// write returns, with write's errno (EPIPE when the reader is gone). Sockets: pass
// MSG_NOSIGNAL to send instead.
[[nodiscard]] ssize_t write_no_sigpipe(int fd, const void* data, std::size_t len);

// Sets or clears O_NONBLOCK on `fd`.
[[nodiscard]] Status set_nonblocking(int fd, bool on = true);

}  // namespace cordon::proc
