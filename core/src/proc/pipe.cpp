#include "cordon/proc/pipe.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

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

Status set_nonblocking(int fd, bool on) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return fail_errno("fcntl(F_GETFL)");
  const int wanted = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (wanted != flags && ::fcntl(fd, F_SETFL, wanted) != 0) return fail_errno("fcntl(F_SETFL)");
  return {};
}

}  // namespace cordon::proc
