// cordon-init's "oci" role, cordon-oci-init: PID 1 of each container the container backend
// runs. The runtime execs it as the container's process (argv: itself and "oci",
// environment: empty), with the code's stdio on fds 0-2; it connects to cordon's control
// socket (`--connect PATH`) and keeps the connection as fd 3
// (cordon/proc/oci_init_channel.h).
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

bool read_order(Order& order, std::vector<char>& blob) {
  cordon::init::OrderHeader header;
  if (!read_full(kInitControlFd, &header, sizeof(header)) ||
      header.magic != cordon::init::kOrderMagic || header.kind != cordon::init::OrderKind::kRun ||
      header.size > cordon::oci::kInitMaxOrderBytes) {
    return false;
  }
  blob.resize(header.size);
  if (!read_full(kInitControlFd, blob.data(), blob.size()) ||
      cordon::init::check_order(blob.data(), header.size, header.kind) != 0) {
    return false;
  }
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

// Connects to cordon's listener at `path` and makes the connection fd 3. Done first, before
// any code exists in the container: cordon accepts one connection only and removes the
// listener before it sends the order.
bool connect_channel(const char* path) {
  struct sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::size_t len = std::strlen(path);
  if (len == 0 || len >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path, len);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  if (::connect(fd, reinterpret_cast<const struct sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return false;
  }
  if (fd == kInitControlFd) return true;
  // dup3 leaves O_CLOEXEC on the copy: the code must not inherit the channel.
  const bool moved = ::dup3(fd, kInitControlFd, O_CLOEXEC) == kInitControlFd;
  ::close(fd);
  return moved;
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
  if (!read_order(order, blob)) return 2;
  const std::int64_t backstop = now_ms() + order.backstop_ms;

  // SIGCHLD through a signalfd, so one poll waits for a child, cordon and the backstop.
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  const int sfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  int exec_pipe[2];
  if (sfd < 0 || ::pipe2(exec_pipe, O_CLOEXEC) != 0) return 3;

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
  const pid_t main_pid = ::fork();
  if (main_pid < 0) return 3;
  if (main_pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(order.exe, order.argv.data(), order.envp.data());
    const int e = errno;
    (void)::write(exec_pipe[1], &e, sizeof(e));
    ::_exit(127);
  }
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  if (read_full(exec_pipe[0], &exec_errno, sizeof(exec_errno))) report.start_errno = exec_errno;
  ::close(exec_pipe[0]);

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
    if ((fds[1].revents & POLLIN) != 0) {
      struct signalfd_siginfo si{};
      while (::read(sfd, &si, sizeof(si)) == sizeof(si)) {
      }
      for (;;) {
        int status = 0;
        struct rusage ru{};
        const pid_t got = ::wait4(-1, &status, WNOHANG | __WALL, &ru);
        if (got <= 0) break;
        if (got != main_pid) continue;
        cordon::init::take_main_end(report, status, ru);
        main_done = true;
      }
    }
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
