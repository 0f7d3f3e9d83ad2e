// One message with file descriptors (SCM_RIGHTS) over a socket, both ways: the set-up
// process sends the sandbox's /tmp, cordon sends the init the code's order and stdio.
// Plain syscalls only (no allocation): usable between clone and exec, and in the static
// cordon-ns-init.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace cordon::proc {

// Enough for a set-up request to cordon-ns-spawner: its plan, 4 fds and up to 8 limit groups.
inline constexpr int kMaxPassedFds = 16;

// Sends `len` bytes of `data` with `count` (<= kMaxPassedFds) fds. Returns 0 or the errno
// (MSG_NOSIGNAL: a peer that is gone is EPIPE, not a SIGPIPE).
inline int send_with_fds(int sock, const void* data, std::size_t len, const int* fds, int count) {
  struct iovec iov{const_cast<void*>(data), len};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)] = {};
  struct msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (count > 0) {
    if (count > kMaxPassedFds) return EINVAL;
    mh.msg_control = control;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<std::size_t>(count));
    struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<std::size_t>(count));
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * static_cast<std::size_t>(count));
  }
  ssize_t sent = 0;
  do {
    sent = ::sendmsg(sock, &mh, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  return sent < 0 ? errno : 0;
}

// Receives one message into `data` (at most `len` bytes) and up to `max` fds (CLOEXEC)
// into `fds`, their number in *count. Returns the message's size (0: the peer closed), or
// -errno.
inline ssize_t receive_with_fds(int sock, void* data, std::size_t len, int* fds, int max,
                                int* count) {
  struct iovec iov{data, len};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)] = {};
  struct msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof(control);
  ssize_t n = 0;
  do {
    n = ::recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  *count = 0;
  if (n < 0) return -errno;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const auto got = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int i = 0; i < got; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + sizeof(int) * static_cast<std::size_t>(i), sizeof(int));
      if (*count < max) {
        fds[(*count)++] = fd;
      } else {
        ::close(fd);  // more than the caller takes: never leak one
      }
    }
  }
  return n;
}

}  // namespace cordon::proc
