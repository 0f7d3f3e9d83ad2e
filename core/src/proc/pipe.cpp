#include "cordon/proc/pipe.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>

namespace cordon::proc {

Result<Pipe> make_pipe(int extra_flags) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | extra_flags) != 0) return fail_errno("pipe2");
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

Result<Pipe> make_seqpacket_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return fail_errno("socketpair(AF_UNIX, SOCK_SEQPACKET)");
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

ssize_t write_no_sigpipe(int fd, const void* data, std::size_t len) {
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  // Pending already (blocked by the embedder, say): that one is not ours to consume.
  sigset_t pending;
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  sigset_t old;
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  const ssize_t n = ::write(fd, data, len);
  const int write_errno = errno;
  if (n < 0 && write_errno == EPIPE && !was_pending) {
    const struct timespec zero{};
    while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = write_errno;
  return n;
}

Status set_nonblocking(int fd, bool on) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return fail_errno("fcntl(F_GETFL)");
  const int wanted = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (wanted != flags && ::fcntl(fd, F_SETFL, wanted) != 0) return fail_errno("fcntl(F_SETFL)");
  return {};
}

}  // namespace cordon::proc
