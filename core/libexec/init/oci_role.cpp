// cordon-init's "oci" role, cordon-oci-init: PID 1 of each container the container backend
// runs. The runtime execs it as the container's process (argv: itself and "oci",
// environment: empty), with the code's stdio on fds 0-2; it connects to cordon's control
// socket (`--connect PATH`) and keeps the connection as fd 3
// (cordon/proc/oci_init_channel.h).
//
// A session's container (issue #41) is told so by its first order's kind (kSessionRun): its
// init then serves call after call (serve_session below), each call's stdio three
// connections it makes to cordon's per-call listeners.
//
// It reads its order (the code's command and environment, and its backstop) from fd 3,
// starts the code as its child, reaps every process reparented to it, and when the code's
// main process ends kills and reaps every other process of the container (init_end.h),
// then writes the report back on fd 3 and exits. Being PID 1 of the container's PID
// namespace, its exit also makes the kernel SIGKILL every process left in the container
// (when it stops early).
//
// Why it exists: a SIGKILLed `runc run` leaves its container running, so the container
// must end by itself when cordon dies. The init exits when fd 3 reads EOF (cordon's end
// closed: cordon died or gave up) or anything at all (cordon asks it to stop), and at its
// backstop deadline, taking the whole container with it. It also lets a container be
// started before its code is known (the warm pool).
//
// PID 1 gets only the signals it has handlers for from inside its namespace: the code
// cannot kill it. It makes itself non-dumpable first, so the code (same uid) cannot read
// or write /proc/1/mem. Static: a user-named root filesystem may have no loader.
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <vector>

#include "cordon/proc/init_end.h"
#include "cordon/proc/init_protocol.h"
#include "cordon/proc/oci_init_channel.h"
#include "relay.h"
#include "roles.h"

namespace {

using cordon::init::OrderRecord;
using cordon::init::OrderTag;
using cordon::init::Report;
using cordon::oci::kInitControlFd;

std::int64_t now_ms() {
  struct timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

bool read_full(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

void write_report(const Report& report) {
  const auto* p = reinterpret_cast<const char*>(&report);
  std::size_t left = sizeof(report);
  while (left > 0) {
    const ssize_t n = ::write(kInitControlFd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// The order's command, environment and backstop: pointers into `blob`, which
// check_order() found well-formed.
struct Order {
  std::vector<char*> argv;
  std::vector<char*> envp;
  const char* exe = nullptr;
  std::int64_t backstop_ms = 0;
  std::uint16_t relay_port = 0;  // 0: no relay
  const char* relay_path = nullptr;
};

// Reads the next order into `order` (pointers into `blob`): a kRun, or a kSessionRun, whose
// kind is left in `*kind`. `session`: a session's init, which takes session orders only and
// skips a kEndRun that crossed its call's own end. False on EOF or anything malformed.
bool read_order(Order& order, std::vector<char>& blob, cordon::init::OrderKind* kind,
                bool session) {
  using cordon::init::OrderKind;
  cordon::init::OrderHeader header;
  for (;;) {
    if (!read_full(kInitControlFd, &header, sizeof(header)) ||
        header.magic != cordon::init::kOrderMagic) {
      return false;
    }
    if (!session || header.kind != OrderKind::kEndRun || header.size != 0) break;
  }
  const bool kind_ok =
      header.kind == OrderKind::kSessionRun || (!session && header.kind == OrderKind::kRun);
  if (!kind_ok || header.size > cordon::oci::kInitMaxOrderBytes) return false;
  *kind = header.kind;
  blob.resize(header.size);
  if (!read_full(kInitControlFd, blob.data(), blob.size()) ||
      cordon::init::check_order(blob.data(), header.size, header.kind) != 0) {
    return false;
  }
  order = Order{};
  std::uint32_t offset = 0;
  while (const OrderRecord* r = cordon::init::next_record(blob.data(), header.size, &offset)) {
    char* data = const_cast<char*>(cordon::init::record_data(r));
    switch (r->tag) {
      case OrderTag::kExe:
        order.exe = data;
        break;
      case OrderTag::kArg:
        order.argv.push_back(data);
        break;
      case OrderTag::kEnv:
        order.envp.push_back(data);
        break;
      case OrderTag::kBackstop:
        std::memcpy(&order.backstop_ms, data, sizeof(order.backstop_ms));
        break;
      case OrderTag::kRelay:
        order.relay_port = static_cast<std::uint16_t>(r->aux);
        order.relay_path = data;
        break;
      default:  // the runtime applied the cwd and rlimits, the bundle holds the files
        break;
    }
  }
  order.argv.push_back(nullptr);
  order.envp.push_back(nullptr);
  return true;
}

// A stream connection to the unix socket at `path` (CLOEXEC), or -1.
int connect_unix(const char* path) {
  struct sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::size_t len = std::strlen(path);
  if (len == 0 || len >= sizeof(addr.sun_path)) return -1;
  std::memcpy(addr.sun_path, path, len);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const struct sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Connects to cordon's listener at `path` and makes the connection fd 3. Done first, before
// any code exists in the container: cordon accepts one connection only and removes the
// listener before it sends the order.
bool connect_channel(const char* path) {
  const int fd = connect_unix(path);
  if (fd < 0) return false;
  if (fd == kInitControlFd) return true;
  // dup3 leaves O_CLOEXEC on the copy: the code must not inherit the channel.
  const bool moved = ::dup3(fd, kInitControlFd, O_CLOEXEC) == kInitControlFd;
  ::close(fd);
  return moved;
}

// Starts the order's code as our child with `stdio` (-1: ours) as its fds 0-2; its exec's
// errno, when it failed, goes to report.start_errno. -1 when fork failed.
pid_t start_code(const Order& order, const int stdio[3], Report& report) {
  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(exec_pipe[0]);
    ::close(exec_pipe[1]);
    return -1;
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // dup2 clears FD_CLOEXEC on the copies, which the code keeps as its stdio.
    for (int fd = 0; fd < 3; ++fd) {
      if (stdio[fd] >= 0 && ::dup2(stdio[fd], fd) != fd) ::_exit(127);
    }
    ::execve(order.exe, order.argv.data(), order.envp.data());
    const int e = errno;
    (void)::write(exec_pipe[1], &e, sizeof(e));
    ::_exit(127);
  }
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  if (read_full(exec_pipe[0], &exec_errno, sizeof(exec_errno))) report.start_errno = exec_errno;
  ::close(exec_pipe[0]);
  return pid;
}

// Reaps every child that ended; true when `main_pid` was among them (its end in `report`).
bool reap(int sfd, pid_t main_pid, Report& report) {
  struct signalfd_siginfo si{};
  while (::read(sfd, &si, sizeof(si)) == sizeof(si)) {
  }
  bool main_ended = false;
  for (;;) {
    int status = 0;
    struct rusage ru{};
    const pid_t got = ::wait4(-1, &status, WNOHANG | __WALL, &ru);
    if (got <= 0) break;
    if (got != main_pid) continue;
    cordon::init::take_main_end(report, status, ru);
    main_ended = true;
  }
  return main_ended;
}

// A session's init (its first order was a kSessionRun, oci_init_channel.h): runs `order`,
// then each next one, one at a time, until cordon closes the control socket. A call's
// stdio are three connections to cordon's per-call listeners, made before its code exists.
// Each call ends as a one-shot run does (end_run: every other process of the container
// killed and reaped, then the report) when its main process ends, when cordon sends
// kEndRun, or at its backstop; the container, and its workspace, stay. Ends only by
// exiting, which takes the container with it.
[[noreturn]] void serve_session(Order order, std::vector<char> blob, int sfd) {
  for (;;) {
    Report report;
    const std::int64_t backstop = now_ms() + order.backstop_ms;
    int stdio[3] = {
        connect_unix(cordon::oci::kCallStdinPath),
        connect_unix(cordon::oci::kCallStdoutPath),
        connect_unix(cordon::oci::kCallStderrPath),
    };
    pid_t main_pid = -1;
    // A session with an allow-list: each order's relay (to the session's one proxy) listens
    // before its code starts and ends with its run, as a one-shot run's does.
    const pid_t relay =
        order.relay_port != 0 ? cordon::init::start_relay(order.relay_port, order.relay_path) : 0;
    if (relay < 0) {
      report.relay_errno = static_cast<std::int32_t>(-relay);  // the code never starts
    } else if (stdio[0] < 0 || stdio[1] < 0 || stdio[2] < 0) {
      report.start_errno = ECONNREFUSED;  // no stdio for the call: its code never starts
    } else {
      main_pid = start_code(order, stdio, report);
      if (main_pid < 0) ::_exit(3);
    }
    for (const int fd : stdio) {
      if (fd >= 0) ::close(fd);
    }
    for (bool done = main_pid < 0; !done;) {
      const std::int64_t left = backstop - now_ms();
      if (left <= 0) break;  // the backstop ends the call, not the session
      struct pollfd fds[2] = {{kInitControlFd, POLLIN, 0}, {sfd, POLLIN, 0}};
      const int n = ::poll(fds, 2, static_cast<int>(left > 60000 ? 60000 : left));
      if (n < 0 && errno != EINTR) ::_exit(3);
      if (n <= 0) continue;
      if ((fds[1].revents & POLLIN) != 0 && reap(sfd, main_pid, report)) break;
      if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        // cordon ends the call (kEndRun); EOF or anything else gives the session up, and our
        // exit takes the container with us.
        cordon::init::OrderHeader header;
        if (!read_full(kInitControlFd, &header, sizeof(header)) ||
            header.magic != cordon::init::kOrderMagic ||
            header.kind != cordon::init::OrderKind::kEndRun || header.size != 0) {
          ::_exit(5);
        }
        done = true;
      }
    }
    // kill(-1) from PID 1 reaches every process of the namespace but us, atomically.
    cordon::init::end_run(report, main_pid, [] { ::kill(-1, SIGKILL); }, /*atomic=*/true);
    write_report(report);
    cordon::init::OrderKind kind{};
    if (!read_order(order, blob, &kind, /*session=*/true)) ::_exit(0);
  }
}

}  // namespace

namespace cordon::init {

int oci_init_main(int argc, char** argv) {
  ::prctl(PR_SET_DUMPABLE, 0);
  if (argc == 3 && std::strcmp(argv[1], cordon::oci::kInitConnectFlag) == 0) {
    if (!connect_channel(argv[2])) return 2;
  } else if (argc != 1) {
    return 2;
  }
  // The code must not inherit cordon's control socket.
  ::fcntl(kInitControlFd, F_SETFD, FD_CLOEXEC);

  Order order;
  std::vector<char> blob;
  cordon::init::OrderKind kind{};
  if (!read_order(order, blob, &kind, /*session=*/false)) return 2;
  const std::int64_t backstop = now_ms() + order.backstop_ms;

  // SIGCHLD through a signalfd, so one poll waits for a child, cordon and the backstop.
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  const int sfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) return 3;
  if (kind == cordon::init::OrderKind::kSessionRun) serve_session(order, std::move(blob), sfd);

  Report report;
  // The network relay listens before the code starts (so the code cannot take its port);
  // when it cannot, the code never runs and the report says why (nothing to reap).
  if (order.relay_port != 0) {
    const pid_t relay = cordon::init::start_relay(order.relay_port, order.relay_path);
    if (relay < 0) {
      report.relay_errno = static_cast<std::int32_t>(-relay);
      cordon::init::end_run(report, -1, [] { ::kill(-1, SIGKILL); }, /*atomic=*/true);
      write_report(report);
      return 0;
    }
  }
  const int inherited[3] = {-1, -1, -1};  // the runtime gave the code's stdio as ours
  const pid_t main_pid = start_code(order, inherited, report);
  if (main_pid < 0) return 3;

  bool main_done = false;
  while (!main_done) {
    const std::int64_t left = backstop - now_ms();
    if (left <= 0) return 4;  // the backstop: the kernel kills the rest with us
    struct pollfd fds[2] = {{kInitControlFd, POLLIN, 0}, {sfd, POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(left > 60000 ? 60000 : left));
    if (n < 0 && errno != EINTR) return 3;
    if (n <= 0) continue;
    // Anything from cordon, EOF included: stop now.
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) return 5;
    if ((fds[1].revents & POLLIN) != 0 && reap(sfd, main_pid, report)) main_done = true;
  }
  // The main process has ended: end every other process of the container before saying
  // so (init_end.h), so that the report also means "nothing of the code is left", whether
  // the container goes away now or is a pooled one whose removal comes later. kill(-1)
  // from PID 1 reaches every process of the namespace but us, atomically.
  cordon::init::end_run(report, main_pid, [] { ::kill(-1, SIGKILL); }, /*atomic=*/true);
  write_report(report);
  return 0;
}

}  // namespace cordon::init
