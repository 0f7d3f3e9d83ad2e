// cordon-ns-init: PID 1 of a namespace sandbox. Exec'd by the sandbox's set-up process
// right after it started the code, so no process in the sandbox carries cordon's memory,
// environment or fds: this image is small and static, its environment is empty, and its
// only fds are /dev/null (0-2) and the report pipe (3).
//
// It reaps every process reparented to it (orphans of the code's tree), and when the
// code's main process (argv[1], a pid in this namespace) ends, it writes the main
// process's status and resource use to fd 3 and exits. The kernel then SIGKILLs every
// process left in the PID namespace: setsid'd and nohup'd descendants die with the run.
//
// PID 1 of a namespace receives only signals it has a handler for from inside the
// namespace, so the code cannot kill it (not even with SIGKILL); cordon kills it from
// outside at the deadline, which takes the whole namespace down. PR_SET_PDEATHSIG was set
// before exec and survives it (no credential change): if cordon dies, so does the sandbox.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>

#include "init_protocol.h"

namespace {

std::int64_t usec(const struct timeval& tv) {
  return static_cast<std::int64_t>(tv.tv_sec) * 1000000 + tv.tv_usec;
}

struct KernelSigset {
  unsigned long bits[_NSIG / (8 * sizeof(unsigned long))];
};

}  // namespace

int main(int argc, char** argv) {
  // First: the code runs as our uid, so make /proc/1/{mem,environ,fd} unreadable to it.
  ::prctl(PR_SET_DUMPABLE, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (argc != 2) return 2;
  const auto main_pid = static_cast<pid_t>(std::strtol(argv[1], nullptr, 10));
  // The set-up process blocked every signal; we need none of them delivered (no handlers:
  // as PID 1 we ignore what the code sends), but wait4 must not be disturbed either.
  KernelSigset none{};
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, sizeof(KernelSigset));

  cordon::ns::InitReport report;
  for (;;) {
    int status = 0;
    struct rusage ru{};
    const pid_t got = ::wait4(-1, &status, __WALL, &ru);
    if (got < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: the main process is gone without our seeing it (cannot happen)
    }
    if (got != main_pid) continue;
    report.magic = cordon::ns::kInitReportMagic;
    report.status = status;
    report.utime_us = usec(ru.ru_utime);
    report.stime_us = usec(ru.ru_stime);
    report.maxrss_kb = ru.ru_maxrss;
    break;
  }
  struct rusage all{};
  ::getrusage(RUSAGE_CHILDREN, &all);
  report.children_cpu_us = usec(all.ru_utime) + usec(all.ru_stime);
  // One write of a small struct to a pipe is atomic; cordon reads it after we exit.
  (void)::write(cordon::ns::kInitReportFd, &report, sizeof(report));
  return 0;
}
