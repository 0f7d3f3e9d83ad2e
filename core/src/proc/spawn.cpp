// Kept free of anything but headers from cordon_core so the one helper, cordon-init
// (core/libexec/init/), can compile it in without linking the library.
#include "cordon/proc/spawn.h"

#include <fcntl.h>
#include <linux/sched.h>  // CLONE_PIDFD
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "cordon/proc/kernel_sigset.h"

namespace cordon::proc {
namespace {

constexpr std::size_t kMaxChildFds = 16;              // 0, 1, 2 and up to 13 kept fds
constexpr std::size_t kChildStackBytes = 128 * 1024;  // execve and a few syscalls need little

// Everything the child reads, prepared by the parent. Plain pointers into vectors the
// parent keeps alive: the child must not allocate (it shares the parent's heap and the
// parent's malloc lock may be held by another thread at clone time).
struct ChildPlan {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;
  int fds[kMaxChildFds] = {};
  std::size_t fd_count = 0;
  int cgroup_procs_fd = -1;  // -1 also when the child was born inside its cgroup
  bool new_session = true;
  const RlimitSetting* rlimits = nullptr;
  std::size_t rlimit_count = 0;
  ChildHook hook = nullptr;
  void* hook_arg = nullptr;
  // Written by the child on failure; the parent reads it after clone returns (CLONE_VFORK
  // suspends the parent until the child execs or exits, so there is no race).
  int error = 0;
  SpawnStage stage = SpawnStage::kExec;
};

// The child shares the parent's memory (CLONE_VM) and runs while the parent's other threads
// go on, so it calls the kernel only, never a libc wrapper that a sanitizer intercepts, and
// no instrumented code (CORDON_CLONE_VM_CHILD, and plain arrays rather than std::array,
// whose operator[] is an instrumented call in a sanitizer's debug build): an interceptor or
// an instrumented access runs the sanitizer's runtime in the child on the parent's shared
// state (its fd table, its table of signal handlers, its locks). Under ThreadSanitizer the
// child's dup2 was reported racing other threads' fds, its sigaction calls rewrote the
// runtime's handler table for the whole parent, and a child that stopped holding the
// runtime's thread-registry lock (a report, then halt_on_error) deadlocked the parent.

// A syscall argument as the register value the kernel reads.
template <typename T>
CORDON_CLONE_VM_CHILD long sys_arg(T value) {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<long>(value);
  } else {
    return static_cast<long>(value);
  }
}

// syscall(2) with an int result: -1 and errno on failure, as the libc wrappers.
template <typename... Args>
CORDON_CLONE_VM_CHILD int sys(long number, Args... args) {
  return static_cast<int>(::syscall(number, sys_arg(args)...));
}

[[noreturn]] CORDON_CLONE_VM_CHILD void child_fail(ChildPlan* plan, SpawnStage stage, int err) {
  plan->stage = stage;
  plan->error = err != 0 ? err : EINVAL;
  ::syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

// The child. Async-signal-safe calls only (see ChildPlan); errno is shared with the
// parent thread's TLS, which is harmless because the parent is suspended meanwhile.
CORDON_CLONE_VM_CHILD int child_main(void* arg) {
  auto* plan = static_cast<ChildPlan*>(arg);

  // Handlers of the parent must never run in the child (they would run on our memory),
  // and an ignored SIGPIPE or SIGCHLD must not be inherited across exec by the code.
  // Signals are still all blocked here (the parent blocked them before clone).
  for (int sig = 1; sig < _NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    (void)raw_sigaction_default(sig);
  }

  // Join the cgroup first: from here on every process this one creates is born inside it,
  // so cgroup.kill reaches all of them, including those that setsid or daemonise.
  if (plan->cgroup_procs_fd >= 0 && sys(SYS_write, plan->cgroup_procs_fd, "0", 1) != 1) {
    child_fail(plan, SpawnStage::kCgroup, errno);
  }
  // Own session and process group and no controlling tty: the code cannot read our
  // terminal, and a terminal's job-control signals do not reach it.
  if (plan->new_session && sys(SYS_setsid) < 0) child_fail(plan, SpawnStage::kSetsid, errno);

  // Move every source fd above the target range first, so placing fd i never clobbers a
  // source that happens to sit at a lower target number; then dup3 (which clears CLOEXEC;
  // the source is never the target, as dup3 requires).
  const int count = static_cast<int>(plan->fd_count);
  int high[kMaxChildFds] = {};
  for (int i = 0; i < count; ++i) {
    high[i] = sys(SYS_fcntl, plan->fds[i], F_DUPFD_CLOEXEC, count);
    if (high[i] < 0) child_fail(plan, SpawnStage::kFds, errno);
  }
  for (int i = 0; i < count; ++i) {
    if (sys(SYS_dup3, high[i], i, 0) < 0) child_fail(plan, SpawnStage::kFds, errno);
  }

  if (plan->cwd != nullptr && sys(SYS_chdir, plan->cwd) != 0) {
    child_fail(plan, SpawnStage::kChdir, errno);
  }

  for (std::size_t i = 0; i < plan->rlimit_count; ++i) {
    const struct rlimit lim{plan->rlimits[i].soft, plan->rlimits[i].hard};
    if (sys(SYS_prlimit64, 0, plan->rlimits[i].resource, &lim,
            static_cast<struct rlimit*>(nullptr)) != 0) {
      child_fail(plan, SpawnStage::kRlimit, errno);
    }
  }

  if (plan->hook != nullptr) {
    if (const int err = plan->hook(plan->hook_arg); err != 0) {
      child_fail(plan, SpawnStage::kHook, err);
    }
  }

  // Nothing of ours beyond the mapped fds reaches the code, CLOEXEC or not. close_range
  // (Linux 5.9) is what sets cordon's minimum kernel (README.md, "Quick start").
  if (sys(SYS_close_range, static_cast<unsigned>(count), ~0U, /*flags=*/0) != 0) {
    child_fail(plan, SpawnStage::kFds, errno);
  }

  // Unblock only now: a signal arriving earlier would find the dispositions half reset.
  KernelSigset none{};
  raw_sigprocmask(SIG_SETMASK, &none, nullptr);

  sys(SYS_execve, plan->path, plan->argv, plan->envp);
  child_fail(plan, SpawnStage::kExec, errno);
}

#if defined(__x86_64__)
// clone3 for a CLONE_VM child on its own stack. The kernel starts the child with the
// parent's registers but rsp = stack + stack_size, so no C code may run in the child
// before it is on that stack with a fresh frame: the child half is assembly that calls
// fn(arg) and exits if it ever returns (child_main never does; it execs or _exits).
// fn and arg travel in r12/r13, which the kernel copies to the child.
// Returns the child's pid, or -errno.
long clone3_on_stack(struct clone_args* args, int (*fn)(void*), void* arg) {
  long ret = SYS_clone3;
  register int (*r12)(void*) asm("r12") = fn;
  register void* r13 asm("r13") = arg;
  asm volatile(
      "syscall\n\t"
      "testq %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xorl %%ebp, %%ebp\n\t"
      "andq $-16, %%rsp\n\t"
      "movq %%r13, %%rdi\n\t"
      "callq *%%r12\n\t"
      "movl %%eax, %%edi\n\t"
      "movl $60, %%eax\n\t"  // SYS_exit
      "syscall\n\t"
      "hlt\n\t"
      "1:\n\t"
      : "+a"(ret)
      : "D"(args), "S"(sizeof(*args)), "r"(r12), "r"(r13)
      : "rcx", "r11", "memory");
  return ret;
}
constexpr bool kHaveClone3Trampoline = true;
#else
long clone3_on_stack(struct clone_args*, int (*)(void*), void*) { return -ENOSYS; }
constexpr bool kHaveClone3Trampoline = false;
#endif

std::vector<char*> c_array(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

bool ExitInfo::exited() const { return WIFEXITED(status); }
int ExitInfo::exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
int ExitInfo::signal() const { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }

const char* to_string(SpawnStage stage) {
  switch (stage) {
    case SpawnStage::kSignals:
      return "reset signals";
    case SpawnStage::kCgroup:
      return "join cgroup";
    case SpawnStage::kSetsid:
      return "setsid";
    case SpawnStage::kFds:
      return "set up fds";
    case SpawnStage::kChdir:
      return "chdir";
    case SpawnStage::kRlimit:
      return "setrlimit";
    case SpawnStage::kHook:
      return "child set-up";
    case SpawnStage::kExec:
      return "execve";
  }
  return "spawn";
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), pidfd_(std::move(other.pidfd_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::move(other.pidfd_);
  }
  return *this;
}

ChildProcess::~ChildProcess() { kill_and_reap(); }

void ChildProcess::kill_and_reap() {
  if (pid_ > 0) {
    (void)signal(SIGKILL);
    struct rusage ignored{};
    int status = 0;
    while (::wait4(pid_, &status, __WALL, &ignored) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  pidfd_.reset();
}

Status ChildProcess::signal(int sig) const {
  if (pid_ <= 0) return {};
  // Through the pidfd: the pid cannot have been recycled, because we have not reaped it.
  if (::syscall(SYS_pidfd_send_signal, pidfd_.get(), sig, nullptr, 0) != 0 && errno != ESRCH) {
    return fail_errno("pidfd_send_signal");
  }
  return {};
}

Result<ExitInfo> ChildProcess::wait() {
  if (pid_ <= 0) return fail(ErrorCode::kInternal, "wait: no child");
  ExitInfo info;
  // wait4 by pid is safe from reuse for the same reason as above; __WALL also reaps a
  // child made with a non-SIGCHLD exit signal (a namespace backend's clone).
  while (::wait4(pid_, &info.status, __WALL, &info.usage) < 0) {
    if (errno != EINTR) return fail_errno("wait4");
  }
  pid_ = -1;
  return info;
}

Result<std::optional<ExitInfo>> ChildProcess::try_wait() {
  if (pid_ <= 0) return fail(ErrorCode::kInternal, "wait: no child");
  ExitInfo info;
  const pid_t got = ::wait4(pid_, &info.status, __WALL | WNOHANG, &info.usage);
  if (got < 0) return fail_errno("wait4");
  if (got == 0) return std::optional<ExitInfo>{};
  pid_ = -1;
  return std::optional<ExitInfo>{info};
}

Result<ChildProcess> spawn(const SpawnOptions& options, SpawnStage* failed_stage) {
  if (options.argv.empty()) return fail(ErrorCode::kInvalidArgument, "spawn: empty argv");
  if (options.keep_fds.size() + 3 > kMaxChildFds) {
    return fail(ErrorCode::kInvalidArgument, "spawn: too many fds to keep");
  }

  // Everything the child touches is built here, before clone.
  const std::vector<char*> argv = c_array(options.argv);
  const std::vector<char*> envp = c_array(options.env);
  std::vector<RlimitSetting> rlimits = options.rlimits;
  rlimits.push_back({RLIMIT_CORE, 0, 0});  // a crashing program must not drop a core file

  UniqueFd dev_null;
  if (options.stdin_fd < 0 || options.stdout_fd < 0 || options.stderr_fd < 0) {
    dev_null.reset(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!dev_null) return fail_errno("open /dev/null");
  }

  ChildPlan plan;
  plan.path = options.path.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  plan.fds[0] = options.stdin_fd >= 0 ? options.stdin_fd : dev_null.get();
  plan.fds[1] = options.stdout_fd >= 0 ? options.stdout_fd : dev_null.get();
  plan.fds[2] = options.stderr_fd >= 0 ? options.stderr_fd : dev_null.get();
  plan.fd_count = 3;
  for (const int fd : options.keep_fds) plan.fds[plan.fd_count++] = fd;
  plan.cgroup_procs_fd = options.cgroup_procs_fd;
  plan.new_session = options.new_session;
  plan.rlimits = rlimits.data();
  plan.rlimit_count = rlimits.size();
  plan.hook = options.hook;
  plan.hook_arg = options.hook_arg;

  void* stack = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  if (stack == MAP_FAILED) return fail_errno("mmap child stack");
  struct StackUnmap {
    void* p;
    ~StackUnmap() { ::munmap(p, kChildStackBytes); }
  } unmap{stack};

  // Block every signal (glibc's internal ones too) across clone: a handler of ours must
  // not run in the child, which shares our memory and stack-adjacent state until exec.
  // The child unblocks after resetting dispositions; we restore our mask right after.
  const KernelSigset all = KernelSigset::all();
  KernelSigset old{};
  raw_sigprocmask(SIG_SETMASK, &all, &old);

  int pidfd = -1;
  // CLONE_PIDFD hands us the pidfd atomically with the pid (no window for reuse).
  const unsigned long flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | options.extra_clone_flags;
  long pid = -ENOSYS;
  // clone3 through our own trampoline whenever there is one, with or without a cgroup to
  // be born in: it is also a clone that no sanitizer intercepts. ThreadSanitizer's clone()
  // interceptor handles every clone as a fork, and its child-side bookkeeping would run in
  // this CLONE_VM child on the parent's memory (the parent then refused to start threads,
  // "starting new threads after multi-threaded fork"). So under TSan the ::clone fallback
  // below is not supported.
  if (kHaveClone3Trampoline) {
    struct clone_args args{};
    args.flags = flags;
    args.pidfd = reinterpret_cast<std::uintptr_t>(&pidfd);
    args.exit_signal = SIGCHLD;
    args.stack = reinterpret_cast<std::uintptr_t>(stack);
    args.stack_size = kChildStackBytes;
    if (options.cgroup_dir_fd >= 0) {
      args.flags |= CLONE_INTO_CGROUP;
      args.cgroup = static_cast<std::uint64_t>(options.cgroup_dir_fd);
      plan.cgroup_procs_fd = -1;  // born inside: nothing to join
    }
    pid = clone3_on_stack(&args, child_main, &plan);
  }
  // Plain clone, the child joining through cgroup.procs before exec, when clone3 is
  // refused. cordon needs Linux 5.9 (close_range, in child_main), which
  // has clone3 (5.3) and CLONE_INTO_CGROUP (5.7), so the kernel itself does not refuse for
  // its version there (ENOSYS, E2BIG, EINVAL); but a seccomp filter around cordon can:
  // Docker's default profile makes clone3 fail with ENOSYS so that glibc falls back to
  // clone. Non-x86_64 builds have no clone3 trampoline and always come here.
  if (pid == -ENOSYS || pid == -E2BIG || pid == -EINVAL) {
    plan.cgroup_procs_fd = options.cgroup_procs_fd;
    char* stack_top = static_cast<char*>(stack) + kChildStackBytes;
    pid = ::clone(child_main, stack_top, static_cast<int>(flags | SIGCHLD), &plan, &pidfd);
    if (pid < 0) pid = -errno;
  }
  raw_sigprocmask(SIG_SETMASK, &old, nullptr);

  if (pid < 0) return fail_errno("clone", static_cast<int>(-pid));
  ChildProcess child(static_cast<pid_t>(pid), UniqueFd(pidfd));
  if (plan.error != 0) {
    // The child has exited (127); reap it before reporting why.
    (void)child.wait();
    if (failed_stage != nullptr) *failed_stage = plan.stage;
    std::string what = std::string(to_string(plan.stage));
    if (plan.stage == SpawnStage::kExec || plan.stage == SpawnStage::kChdir) {
      what += ' ';
      what += plan.stage == SpawnStage::kExec ? options.path : options.cwd;
    }
    return fail_errno(std::move(what), plan.error);
  }
  return child;
}

}  // namespace cordon::proc
