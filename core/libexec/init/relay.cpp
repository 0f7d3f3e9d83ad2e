#include "relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

namespace cordon::init {
namespace {

// 16 KiB per direction: loopback throughput needs no more, and 64 connections then hold
// 2 MiB at most of the sandbox's memory.
constexpr std::size_t kBufferBytes = 16 * 1024;

// One direction of a connection: bytes read from `from`, not yet written to `to`.
struct Direction {
  char* buf = nullptr;
  std::size_t start = 0;
  std::size_t end = 0;
  bool eof = false;   // `from` said EOF: once drained, `to` gets SHUT_WR
  bool shut = false;  // ... and has
  [[nodiscard]] bool empty() const { return start == end; }
};

struct Pair {
  int fds[2] = {-1, -1};  // [0]: the code's TCP connection, [1]: the proxy's unix socket
  Direction dir[2];       // dir[0]: fds[0] -> fds[1], dir[1]: fds[1] -> fds[0]
  [[nodiscard]] bool open() const { return fds[0] >= 0; }
  [[nodiscard]] bool done() const { return dir[0].shut && dir[1].shut; }
};

void close_pair(Pair& p) {
  for (int& fd : p.fds) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  for (Direction& d : p.dir) {
    std::free(d.buf);
    d = Direction{};
  }
}

int connect_unix(const char* path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof(addr.sun_path)) return -1;
  std::strcpy(addr.sun_path, path);  // NOLINT(clang-analyzer-security.insecureAPI.strcpy): fits
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int rc = 0;
  do {
    rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Takes a connection waiting on `listen_fd` into a free slot, with its own connection to the
// proxy; when the proxy cannot be reached the code's connection is closed at once (it reads
// EOF, as from a proxy that refused).
void accept_one(int listen_fd, Pair* pairs, const char* unix_path) {
  const int code = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (code < 0) return;
  const int proxy = connect_unix(unix_path);
  char* up = proxy >= 0 ? static_cast<char*>(std::malloc(kBufferBytes)) : nullptr;
  char* down = up != nullptr ? static_cast<char*>(std::malloc(kBufferBytes)) : nullptr;
  Pair* slot = nullptr;
  for (int i = 0; i < kRelayMaxConnections && slot == nullptr; ++i) {
    if (!pairs[i].open()) slot = &pairs[i];
  }
  if (down == nullptr || slot == nullptr ||
      ::fcntl(proxy, F_SETFL, ::fcntl(proxy, F_GETFL) | O_NONBLOCK) != 0) {
    std::free(up);
    std::free(down);
    if (proxy >= 0) ::close(proxy);
    ::close(code);
    return;
  }
  *slot = Pair{};
  slot->fds[0] = code;
  slot->fds[1] = proxy;
  slot->dir[0].buf = up;
  slot->dir[1].buf = down;
}

// Moves what it can in direction `i` of `p`: false on an error that ends the connection.
bool pump(Pair& p, int i, short from_events, short to_events) {
  Direction& d = p.dir[i];
  const int from = p.fds[i];
  const int to = p.fds[1 - i];
  if (d.empty() && !d.eof && (from_events & (POLLIN | POLLHUP | POLLERR)) != 0) {
    const ssize_t n = ::read(from, d.buf, kBufferBytes);
    if (n > 0) {
      d.start = 0;
      d.end = static_cast<std::size_t>(n);
    } else if (n == 0) {
      d.eof = true;
    } else if (errno != EAGAIN && errno != EINTR) {
      return false;
    }
  }
  // Written at once, not only on POLLOUT: a socket with room takes it now, and a full one
  // says EAGAIN (then POLLOUT is asked for).
  (void)to_events;
  if (!d.empty()) {
    const ssize_t n = ::send(to, d.buf + d.start, d.end - d.start, MSG_NOSIGNAL);
    if (n > 0) {
      d.start += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return false;
    }
  }
  if (d.eof && d.empty() && !d.shut) {
    ::shutdown(to, SHUT_WR);
    d.shut = true;
  }
  return true;
}

}  // namespace

int relay_listen(std::uint16_t port, std::uint16_t* bound) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -errno;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  // A session's init starts a relay for each run of its kernel (issue #41): the previous
  // relay's connections may linger in TIME_WAIT on the port. SO_REUSEADDR lets the bind
  // past them (never past a listener: no process of the previous run is left to hold one).
  const int one = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
    const int err = errno;
    ::close(fd);
    return -err;
  }
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, kRelayMaxConnections) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    return -err;
  }
  if (bound != nullptr) *bound = ntohs(addr.sin_port);
  return fd;
}

void relay_main(int listen_fd, const char* unix_path, int keep_fd) {
  ::prctl(PR_SET_NAME, "cordon-relay");
  // Nothing of the init's (its control socket, the code's stdio) stays open here: the
  // code's output would not end while we held its pipe. Kept: the listener and keep_fd.
  const int low = keep_fd >= 0 && keep_fd < listen_fd ? keep_fd : listen_fd;
  const int high = keep_fd >= 0 && keep_fd > listen_fd ? keep_fd : listen_fd;
  if (low > 0) ::close_range(0, static_cast<unsigned>(low) - 1, 0);
  if (high > low + 1)
    ::close_range(static_cast<unsigned>(low) + 1, static_cast<unsigned>(high) - 1, 0);
  ::close_range(static_cast<unsigned>(high) + 1, ~0U, 0);
  static Pair pairs[kRelayMaxConnections];
  for (;;) {
    pollfd pfd[1 + 2 * kRelayMaxConnections];
    int used = 0;
    for (const Pair& p : pairs) used += p.open() ? 1 : 0;
    pfd[0] = {listen_fd, static_cast<short>(used < kRelayMaxConnections ? POLLIN : 0), 0};
    for (int i = 0; i < kRelayMaxConnections; ++i) {
      const Pair& p = pairs[i];
      for (int side = 0; side < 2; ++side) {
        short events = 0;
        if (p.open()) {
          // Read side `side` into its direction when that is empty; write side `side` the
          // other direction's bytes.
          if (p.dir[side].empty() && !p.dir[side].eof) events |= POLLIN;
          if (!p.dir[1 - side].empty()) events |= POLLOUT;
        }
        pfd[1 + 2 * i + side] = {p.open() ? p.fds[side] : -1, events, 0};
      }
    }
    if (::poll(pfd, 1 + 2 * kRelayMaxConnections, -1) < 0) {
      if (errno == EINTR) continue;
      ::_exit(1);
    }
    for (int i = 0; i < kRelayMaxConnections; ++i) {
      Pair& p = pairs[i];
      if (!p.open()) continue;
      const short ev0 = pfd[1 + 2 * i].revents;
      const short ev1 = pfd[2 + 2 * i].revents;
      if (!pump(p, 0, ev0, ev1) || !pump(p, 1, ev1, ev0) || p.done()) close_pair(p);
    }
    if ((pfd[0].revents & POLLIN) != 0) accept_one(listen_fd, pairs, unix_path);
  }
}

pid_t start_relay(std::uint16_t port, const char* unix_path, int keep_fd) {
  const int listen_fd = relay_listen(port, nullptr);
  if (listen_fd < 0) return listen_fd;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(listen_fd);
    return -err;
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(0);  // the init is gone already
    relay_main(listen_fd, unix_path, keep_fd);
  }
  ::close(listen_fd);
  return pid;
}

}  // namespace cordon::init
