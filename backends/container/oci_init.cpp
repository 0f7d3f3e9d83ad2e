// cordon-oci-init: PID 1 of each container the container backend runs. The runtime execs
// it as the container's process (argv: just itself, environment: empty), with the code's
// stdio on fds 0-2 and cordon's control socket on fd 3 (init_protocol.h).
//
// It reads the code's argv and environment from fd 3, starts the code as its child, reaps
// every process reparented to it, and when the code's main process ends kills and reaps
// every other process of the container, then writes the status and resource use back on
// fd 3, saying so (everything_reaped), and exits. Being PID 1 of the container's PID
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
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <vector>

#include "cordon/proc/rusage_usec.h"
#include "init_protocol.h"

namespace {

using cordon::oci::InitReport;
using cordon::oci::InitRequest;
using cordon::oci::kInitControlFd;
using cordon::proc::usec;

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

void write_report(const InitReport& report) {
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

// Splits `count` NUL-terminated strings off `blob` starting at `*pos`.
bool take_strings(std::vector<char>& blob, std::size_t* pos, std::uint32_t count,
                  std::vector<char*>& out) {
  for (std::uint32_t i = 0; i < count; ++i) {
    if (*pos >= blob.size()) return false;
    char* s = blob.data() + *pos;
    const void* nul = std::memchr(s, '\0', blob.size() - *pos);
    if (nul == nullptr) return false;
    out.push_back(s);
    *pos = static_cast<std::size_t>(static_cast<const char*>(nul) - blob.data()) + 1;
  }
  out.push_back(nullptr);
  return true;
}

}  // namespace

int main() {
  ::prctl(PR_SET_DUMPABLE, 0);
  // The code must not inherit cordon's control socket.
  ::fcntl(kInitControlFd, F_SETFD, FD_CLOEXEC);

  InitRequest req;
  if (!read_full(kInitControlFd, &req, sizeof(req)) || req.magic != cordon::oci::kInitMagic ||
      req.argc == 0 || req.argc + req.envc > cordon::oci::kInitMaxStrings ||
      req.strings_bytes > cordon::oci::kInitMaxBytes) {
    return 2;
  }
  std::vector<char> blob(req.strings_bytes);
  if (!read_full(kInitControlFd, blob.data(), blob.size())) return 2;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::size_t pos = 0;
  if (!take_strings(blob, &pos, req.argc, argv) || !take_strings(blob, &pos, req.envc, envp)) {
    return 2;
  }
  const std::int64_t backstop = now_ms() + req.backstop_ms;

  // SIGCHLD through a signalfd, so one poll waits for a child, cordon and the backstop.
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  const int sfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  int exec_pipe[2];
  if (sfd < 0 || ::pipe2(exec_pipe, O_CLOEXEC) != 0) return 3;

  InitReport report;
  const pid_t main_pid = ::fork();
  if (main_pid < 0) return 3;
  if (main_pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(argv[0], argv.data(), envp.data());
    const int e = errno;
    (void)::write(exec_pipe[1], &e, sizeof(e));
    ::_exit(127);
  }
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  if (read_full(exec_pipe[0], &exec_errno, sizeof(exec_errno))) report.exec_errno = exec_errno;
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
        report.status = status;
        report.utime_us = usec(ru.ru_utime);
        report.stime_us = usec(ru.ru_stime);
        report.maxrss_kb = ru.ru_maxrss;
        main_done = true;
      }
    }
  }
  // The main process has ended: end every other process of the container before saying
  // so (as the namespace backend's init does), so that the report also means "nothing of
  // the code is left": cordon then reads the cgroup figures and collects artifacts with no
  // orphan still running, whether the container goes away now or is a pooled one whose
  // removal comes later. kill(-1) from PID 1 reaches every process of the namespace but
  // us; one born meanwhile is the child of one it killed and ours once its parent is
  // reaped, so the next turn kills it. ECHILD: none left.
  for (;;) {
    ::kill(-1, SIGKILL);
    const pid_t got = ::wait4(-1, nullptr, __WALL, nullptr);
    if (got < 0 && errno == ECHILD) {
      report.everything_reaped = 1;  // only here: cordon refuses a report without it
      break;
    }
  }
  struct rusage all{};
  ::getrusage(RUSAGE_CHILDREN, &all);
  report.children_cpu_us = usec(all.ru_utime) + usec(all.ru_stime);
  report.magic = cordon::oci::kInitMagic;
  write_report(report);
  return 0;
}
