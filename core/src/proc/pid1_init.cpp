#include "cordon/proc/pid1_init.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <initializer_list>

namespace cordon::proc {

void reap_orphans_if_pid1() {
  if (::getpid() != 1) return;
  sigset_t handled;
  ::sigemptyset(&handled);
  for (const int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) {
    ::sigaddset(&handled, sig);
  }
  // Blocked before the fork, so that no signal between it and the wait below is lost.
  sigset_t before;
  ::sigprocmask(SIG_BLOCK, &handled, &before);
  const pid_t child = ::fork();
  if (child < 0) {
    // No second process to be had: run as PID 1 unsplit (orphans then stay zombies).
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    return;
  }
  if (child == 0) {
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    return;
  }
  for (;;) {
    siginfo_t info{};
    const int sig = ::sigwaitinfo(&handled, &info);
    if (sig < 0) continue;  // EINTR
    if (sig != SIGCHLD) {
      ::kill(child, sig);
      continue;
    }
    // SIGCHLD coalesces: reap every child that ended, ours among them or not.
    for (;;) {
      int status = 0;
      const pid_t got = ::waitpid(-1, &status, WNOHANG);
      if (got <= 0) break;
      if (got != child) continue;
      // PID 1's exit ends every other process of the namespace.
      std::_Exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
  }
}

}  // namespace cordon::proc
