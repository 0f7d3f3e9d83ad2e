// SyscallPolicy -> classic BPF, compiled in the parent with libseccomp, applied in the
// child with two raw syscalls. The child never calls libseccomp: after fork() in a
// multi-threaded parent only async-signal-safe code may run, and libseccomp allocates.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/policy/syscall_policy.h"

namespace cordon::policy {

struct SeccompProgram {
  std::vector<sock_filter> instructions;  // what seccomp(SECCOMP_SET_MODE_FILTER) takes
  std::string policy_name;
  int policy_version = 0;
  std::string policy_hash;  // content_hash() of the policy it came from
  // Names this libseccomp cannot resolve (newer than it): they get the default verdict.
  // Reported, not fatal, so one policy works on older and newer hosts alike.
  std::vector<std::string> unknown_syscalls;
  // Names libseccomp knows but that do not exist on the native architecture (e.g.
  // "umount" on x86_64): nothing to filter.
  std::vector<std::string> absent_on_arch;
};

// Builds the filter for the native architecture only; every other architecture (and
// x32 on x86_64) gets policy.foreign_arch. Fails on an invalid policy or a program too
// long for the kernel (BPF_MAXINSNS).
[[nodiscard]] Result<SeccompProgram> compile_seccomp(const SyscallPolicy& policy);

// Sets PR_SET_NO_NEW_PRIVS (the kernel refuses an unprivileged filter without it, and it
// must hold for the sandbox anyway) and installs the program on the calling thread.
// Async-signal-safe and allocation-free, for the child between fork and exec: it returns
// 0 or an errno instead of Result, whose Error would allocate a message. Only the calling
// thread is filtered (no TSYNC): call it in the single-threaded child, last before exec.
[[nodiscard]] int apply_seccomp(const SeccompProgram& program) noexcept;

}  // namespace cordon::policy
