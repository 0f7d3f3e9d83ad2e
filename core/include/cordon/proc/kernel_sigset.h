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

// For code that runs in a CLONE_VM child before exec (proc::spawn's child): neither
// AddressSanitizer nor ThreadSanitizer instruments it, so no sanitizer runtime runs on the
// parent's shared state from the child (core/src/proc/spawn.cpp says what that broke).
#define CORDON_CLONE_VM_CHILD __attribute__((no_sanitize("address", "thread")))

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
CORDON_CLONE_VM_CHILD inline int raw_sigprocmask(int how, const KernelSigset* set,
                                                 KernelSigset* old) {
  return static_cast<int>(::syscall(SYS_rt_sigprocmask, how, set, old, sizeof(KernelSigset)));
}

// rt_sigaction(sig, SIG_DFL) without glibc's wrapper, which refuses glibc's own signals,
// or a sanitizer's interceptor, which would record the change in its runtime's table of
// handlers: in a CLONE_VM child that table is the parent's. The kernel's struct sigaction
// (x86_64 and arm64 both have sa_restorer); SIG_DFL needs no restorer.
CORDON_CLONE_VM_CHILD inline int raw_sigaction_default(int sig) {
  struct {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    KernelSigset mask;
  } action{SIG_DFL, 0, nullptr, {}};
  return static_cast<int>(
      ::syscall(SYS_rt_sigaction, sig, &action, /*old=*/nullptr, sizeof(KernelSigset)));
}

}  // namespace cordon::proc
