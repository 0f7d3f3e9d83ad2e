// cordon-default v1. Changing any list below changes the policy's content hash; bump the
// version when the meaning changes, so results stay comparable across releases.
//
// Rationale: the sandbox runs sh/bash/python3/coreutils-style workloads as an
// unprivileged user with no capabilities, in its own namespaces. Allowed: everything
// such programs plausibly do to files, memory, processes, signals, time, local IPC and
// sockets of ordinary families. Not allowed (ENOSYS by default): calls that only
// administrators need, that reach obscure kernel subsystems with a history of bugs
// (AIO, fanotify, NUMA policy, modify_ldt), or that would let the code affect the host
// outside its namespaces (sync(), clock setting). Denied with EPERM: the calls the
// threat model names, so a probe sees a clear "forbidden".
#include <linux/personality.h>
#include <linux/sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <string_view>

#include "cordon/policy/syscall_policy.h"

namespace cordon::policy {
namespace {

constexpr std::string_view kAllowed[] = {
    // Files and descriptors.
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "open",
    "openat",
    "openat2",
    "creat",
    "close",
    "close_range",
    "lseek",
    "dup",
    "dup2",
    "dup3",
    "pipe",
    "pipe2",
    "fcntl",
    "flock",
    "fsync",
    "fdatasync",
    "syncfs",
    "sync_file_range",
    "truncate",
    "ftruncate",
    "fallocate",
    "fadvise64",
    "readahead",
    "sendfile",
    "copy_file_range",
    "splice",
    "tee",
    "vmsplice",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "statx",
    "statfs",
    "fstatfs",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "getdents",
    "getdents64",
    "getcwd",
    "chdir",
    "fchdir",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "unlink",
    "unlinkat",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "fchownat",
    "lchown",
    "umask",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    // mknod makes FIFOs and sockets (mkfifo); device nodes need CAP_MKNOD, which the
    // sandbox lacks, and every writable mount is nodev.
    "mknod",
    "mknodat",
    "getxattr",
    "lgetxattr",
    "fgetxattr",
    "listxattr",
    "llistxattr",
    "flistxattr",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "inotify_rm_watch",
    // Memory. mlock is bounded by RLIMIT_MEMLOCK; memfd_create is used by Python and JITs.
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    "msync",
    "mincore",
    "mlock",
    "mlock2",
    "munlock",
    "mlockall",
    "munlockall",
    "membarrier",
    "memfd_create",
    "pkey_alloc",
    "pkey_free",
    "pkey_mprotect",
    // Processes. clone is conditional (below); clone3 is ENOSYS on purpose (below).
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "fork",
    "vfork",
    "wait4",
    "waitid",
    "getpid",
    "getppid",
    "gettid",
    "getpgid",
    "setpgid",
    "getpgrp",
    "getsid",
    "setsid",
    "set_tid_address",
    "set_robust_list",
    "get_robust_list",
    "rseq",
    "futex",
    "futex_waitv",
    "arch_prctl",
    "prctl",
    "restart_syscall",
    "pidfd_open",
    "pidfd_send_signal",
    // Credentials: without capabilities these can only drop privileges.
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "getgroups",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setgroups",
    "setfsuid",
    "setfsgid",
    "capget",
    "capset",
    // Signals.
    "kill",
    "tkill",
    "tgkill",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigsuspend",
    "rt_sigpending",
    "rt_sigtimedwait",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "sigaltstack",
    "pause",
    "signalfd",
    "signalfd4",
    // Scheduling and resources (limits can only be lowered without CAP_SYS_RESOURCE).
    "sched_yield",
    "sched_getaffinity",
    "sched_setaffinity",
    "sched_getparam",
    "sched_setparam",
    "sched_getscheduler",
    "sched_setscheduler",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "sched_rr_get_interval",
    "sched_getattr",
    "sched_setattr",
    "getpriority",
    "setpriority",
    "ioprio_get",
    "ioprio_set",
    "getrlimit",
    "setrlimit",
    "prlimit64",
    "getrusage",
    "times",
    "sysinfo",
    "uname",
    "getcpu",
    // Time (reading and sleeping; setting the clock needs CAP_SYS_TIME).
    "clock_gettime",
    "clock_getres",
    "clock_nanosleep",
    "gettimeofday",
    "time",
    "nanosleep",
    "alarm",
    "getitimer",
    "setitimer",
    "timer_create",
    "timer_settime",
    "timer_gettime",
    "timer_getoverrun",
    "timer_delete",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    // Event loops.
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "eventfd",
    "eventfd2",
    // Sockets (socket/socketpair are conditional on the family, below). The network
    // namespace has only loopback; these are needed for local IPC and for Python's
    // socket module to import and fail cleanly.
    "bind",
    "listen",
    "accept",
    "accept4",
    "connect",
    "getsockname",
    "getpeername",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    "shutdown",
    "setsockopt",
    "getsockopt",
    // System V and POSIX IPC: private to the sandbox's IPC namespace.
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    // Randomness; self-restriction (with no_new_privs these can only narrow the sandbox).
    "getrandom",
    "seccomp",
    "landlock_create_ruleset",
    "landlock_add_rule",
    "landlock_restrict_self",
};

// EPERM: the calls the threat model names (issue 3), plus relatives with the same risk.
constexpr std::string_view kForbidden[] = {
    // Debugging or reading another process's memory or descriptors.
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    "process_madvise",
    // Changing the filesystem view.
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    // Leaving or creating namespaces (clone with namespace flags: below).
    "unshare",
    "setns",
    // Kernel keyrings are not namespaced.
    "keyctl",
    "add_key",
    "request_key",
    // Large kernel attack surfaces.
    "bpf",
    "perf_event_open",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "userfaultfd",
    "modify_ldt",
    // Administration.
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "create_module",
    "open_by_handle_at",
    "name_to_handle_at",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "acct",
    "quotactl",
    "quotactl_fd",
    "lookup_dcookie",
    "vhangup",
    "iopl",
    "ioperm",
    "nfsservctl",
    "uselib",
};

// Every namespace a new process could get. CLONE_NEWTIME (0x80) overlaps clone()'s
// exit-signal byte; signals >= 128 are invalid anyway, so denying that bit only refuses
// calls the kernel would reject.
constexpr std::uint64_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC |
                                          CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |
                                          CLONE_NEWCGROUP | CLONE_NEWTIME;

SyscallPolicy build() {
  SyscallPolicy p;
  p.name = "cordon-default";
  p.version = 1;
  p.default_verdict = Verdict::error(ENOSYS);
  p.foreign_arch = Verdict::kill_process();
  for (std::string_view name : kAllowed)
    p.rules.push_back({std::string(name), Verdict::allow(), {}});
  for (std::string_view name : kForbidden) {
    p.rules.push_back({std::string(name), Verdict::error(EPERM), {}});
  }

  // clone3 passes its flags in a struct in memory, which seccomp cannot read: answer
  // ENOSYS so glibc (>= 2.34) falls back to clone(), whose flags are checked below.
  p.rules.push_back({"clone3", Verdict::error(ENOSYS), {}});

  p.rules.push_back({"clone", Verdict::allow(),
                     ArgCondition{/*index=*/0,
                                  ArgCondition::Match::kAnyBitSet,
                                  kNamespaceFlags,
                                  {},
                                  Verdict::error(EPERM)}});

  // TIOCSTI pushes bytes into a terminal's input queue, TIOCLINUX can read the console
  // selection: both let code act on a terminal it shares with a user. Everything else
  // about ioctl is per-driver and reached only through fds the sandbox can open.
  p.rules.push_back({"ioctl", Verdict::allow(),
                     ArgCondition{/*index=*/1,
                                  ArgCondition::Match::kLow32In,
                                  0,
                                  {TIOCSTI, TIOCLINUX},
                                  Verdict::error(EPERM)}});

  // personality: the 0xffffffff query and PER_LINUX (0) only. Other personas disable
  // ASLR (ADDR_NO_RANDOMIZE), map page zero (MMAP_PAGE_ZERO) or make reads imply exec.
  p.rules.push_back({"personality", Verdict::error(EPERM),
                     ArgCondition{/*index=*/0,
                                  ArgCondition::Match::kLow32In,
                                  0,
                                  {PER_LINUX, 0xffffffffU},
                                  Verdict::allow()}});

  // Address families: local, IP and netlink (glibc's getaddrinfo asks NETLINK_ROUTE for
  // the interface list). The rest (AF_PACKET, AF_ALG, AF_VSOCK, AF_TIPC, ...) is mostly
  // rare protocol code with a record of bugs; EAFNOSUPPORT is what programs expect.
  const std::vector<std::uint32_t> families = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
  for (const char* call : {"socket", "socketpair"}) {
    p.rules.push_back(
        {call, Verdict::error(EAFNOSUPPORT),
         ArgCondition{/*index=*/0, ArgCondition::Match::kLow32In, 0, families, Verdict::allow()}});
  }
  return p;
}

}  // namespace

const SyscallPolicy& default_syscall_policy() {
  // Never destroyed: a warm pool's build still in progress at exit reads it (warm_pool.h).
  static const SyscallPolicy& policy = *new SyscallPolicy(build());
  return policy;
}

}  // namespace cordon::policy
