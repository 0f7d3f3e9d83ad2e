// Installing a compiled seccomp program: no_new_privs, then the filter, two raw syscalls.
// Header-only so that cordon-ns-spawner's static set-up path installs the very same way
// as apply_seccomp() (seccomp_compiler.h) without linking libcordon-core or libseccomp.
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace cordon::policy {

// Sets no_new_privs (without it an unprivileged process may not install a filter, and a
// setuid exec could shed it) and installs `count` instructions on the calling thread.
// Async-signal-safe, allocation-free: 0 or an errno.
[[nodiscard]] inline int install_seccomp_filter(const sock_filter* instructions,
                                                std::size_t count) noexcept {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  sock_fprog fprog{};
  fprog.len = static_cast<unsigned short>(count);
  // The kernel only reads the program; sock_fprog's member is non-const for history.
  fprog.filter = const_cast<sock_filter*>(instructions);
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, /*flags=*/0, &fprog) != 0) return errno;
  return 0;
}

}  // namespace cordon::policy
