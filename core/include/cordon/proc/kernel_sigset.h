// The signal mask as the kernel takes it, for code that must block or unblock every
// signal itself: around clone (so the child starts with nothing delivered before it resets
// its dispositions), and in children of CLONE_VM or of a static PID 1 (cordon-ns-init),
// where glibc's wrappers must not run. Header-only: the static helpers use it without
// linking libcordon-core.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace cordon::proc {

// glibc's sigset_t is 1024 bits and its sigfillset leaves out the two signals glibc uses
// itself (SIGCANCEL, SIGSETXID); rt_sigprocmask wants the kernel's _NSIG bits exactly.
struct KernelSigset {
  unsigned long bits[_NSIG / (8 * sizeof(unsigned long))];

  // Every signal, glibc's internal ones included.
  [[nodiscard]] static KernelSigset all() {
    KernelSigset set;
    std::memset(&set, 0xff, sizeof(set));
    return set;
  }
};

// rt_sigprocmask without glibc's filtering: safe in a CLONE_VM child and before exec.
inline int raw_sigprocmask(int how, const KernelSigset* set, KernelSigset* old) {
  return static_cast<int>(::syscall(SYS_rt_sigprocmask, how, set, old, sizeof(KernelSigset)));
}

}  // namespace cordon::proc
