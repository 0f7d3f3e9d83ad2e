// cordon-gvisor-stat.so: lets coreutils stat files under Debian's gVisor (runsc release
// 2022-12-19), which refuses AT_NO_AUTOMOUNT.
//
// That runsc answers EINVAL to statx() and newfstatat() whenever the flags hold
// AT_NO_AUTOMOUNT (0x800), a flag Linux has accepted since 2.6.38 and which coreutils 9.1
// passes on every stat: `ls /`, `ls -la /tmp` and `stat /` all fail with "Invalid argument"
// there, while python's os.stat (flags 0) works. Measured inside `runsc do`: flags 0, 0x100,
// 0x2000, 0x4000 succeed; 0x800 and 0x900 fail, with any mask. Neither runsc's flags nor
// cordon's filter can help: a seccomp filter only allows or refuses (and runsc's
// --oci-seccomp answers every refusal EPERM, ignoring errnoRet), and glibc's fallback for a
// statx refused with ENOSYS calls newfstatat with the same flag, which gVisor refuses too.
//
// So under runsc the container's processes preload this library (LD_PRELOAD, set by the
// run's environment; docs/ARCHITECTURE.md "gVisor and coreutils' stat"): it defines the
// libc entry points coreutils and others call, and issues the same system call without
// AT_NO_AUTOMOUNT. The flag means nothing there: gVisor has no automount points, so the
// answer is the one Linux would give. It changes no permission, and the code may unset it
// (it isolates nothing; the sentry and the filter do). A static binary or a raw syscall
// still meets gVisor's EINVAL.
//
// Plain C library calls only (linked without libstdc++), as cordon-sh-preload.so.
// <sys/stat.h> is not included: its declarations of these functions would be a second
// spelling of them; the buffers are only passed through, so they are untyped here.
#include <sys/syscall.h>
#include <unistd.h>

namespace {

constexpr int kNoAutomount = 0x800;  // AT_NO_AUTOMOUNT

}  // namespace

extern "C" {

// NOLINTBEGIN(readability-identifier-naming,cppcoreguidelines-pro-type-vararg)
__attribute__((visibility("default"))) int statx(int dirfd, const char* path, int flags,
                                                 unsigned int mask, void* out) {
  return static_cast<int>(::syscall(SYS_statx, dirfd, path, flags & ~kNoAutomount, mask, out));
}

__attribute__((visibility("default"))) int fstatat(int dirfd, const char* path, void* out,
                                                   int flags) {
  return static_cast<int>(::syscall(SYS_newfstatat, dirfd, path, out, flags & ~kNoAutomount));
}

// glibc's 64-bit name of the same call (x86_64 and aarch64: struct stat is stat64).
__attribute__((visibility("default"))) int fstatat64(int dirfd, const char* path, void* out,
                                                     int flags) {
  return static_cast<int>(::syscall(SYS_newfstatat, dirfd, path, out, flags & ~kNoAutomount));
}
// NOLINTEND(readability-identifier-naming,cppcoreguidelines-pro-type-vararg)

}  // extern "C"
