// Starting a child process without fork(), and owning it afterwards.
//
// spawn() uses clone(CLONE_VM | CLONE_VFORK) on a separate stack, like posix_spawn: the
// child borrows the parent's address space until it execs, so the cost does not grow
// with the parent's memory (a plain fork of a parent that touched 200 MiB costs ~10 ms
// against ~2.4 ms here). Because the child shares our memory, everything it needs
// (argv, envp, paths) is built before clone and the child makes only async-signal-safe
// syscalls; it reports a failure's errno and step back through shared memory.
//
// Where it can (x86_64, Linux >= 5.7) spawn() uses clone3 with CLONE_INTO_CGROUP so the
// child is born inside its cgroup. Joining by writing cgroup.procs instead costs ~6 ms on
// this machine kind: a migration takes the cgroup threadgroup rwsem for writing, which
// waits for an RCU grace period while we are suspended in vfork. glibc exports no clone3,
// so a few lines of assembly start the child on its own stack (spawn.cpp).
//
// In the child, in this order: reset every signal disposition to SIG_DFL; join the cgroup
// (before exec, so no descendant can ever run outside it); setsid (own session and process
// group, no controlling tty); place stdin/stdout/stderr and the kept fds at 0, 1, 2, 3, ...;
// chdir; setrlimit (always RLIMIT_CORE 0); the optional hook; close every other fd;
// unblock all signals; execve.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <csignal>
#include <optional>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/unique_fd.h"

namespace cordon::proc {

struct RlimitSetting {
  int resource = RLIMIT_CORE;  // RLIMIT_AS, RLIMIT_CPU, ...
  rlim_t soft = 0;
  rlim_t hard = 0;
};

// Runs in the child after the fds are in place and before execve, on the child's small
// stack and in the parent's memory: async-signal-safe calls only, no allocation, no locks.
// Returns 0, or an errno that makes spawn() fail with SpawnStage::kHook.
using ChildHook = int (*)(void* arg);

struct SpawnOptions {
  std::string path;               // the executable; absolute, no PATH search
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // "NAME=value"; exactly this environment, nothing inherited
  std::string cwd;                // empty: the parent's
  int stdin_fd = -1;              // -1: /dev/null
  int stdout_fd = -1;             // -1: /dev/null
  int stderr_fd = -1;             // -1: /dev/null
  std::vector<int> keep_fds;      // placed at 3, 4, ... in order; at most 13
  // The cgroup to start in. With a directory fd the child is created inside it (clone3
  // CLONE_INTO_CGROUP); where the kernel or architecture cannot do that, the child joins
  // through cgroup.procs before exec instead. Both: every descendant is born inside.
  int cgroup_dir_fd = -1;              // -1: none
  int cgroup_procs_fd = -1;            // an open cgroup.procs to join before exec; -1: none
  bool new_session = true;             // setsid()
  std::vector<RlimitSetting> rlimits;  // RLIMIT_CORE 0 is always applied as well
  // For backends that need more (the namespace backend): extra clone flags such as
  // CLONE_NEWPID, and a hook run in the child before exec.
  unsigned long extra_clone_flags = 0;
  ChildHook hook = nullptr;
  void* hook_arg = nullptr;
};

// The wait status and rusage of a reaped process.
struct ExitInfo {
  int status = 0;  // as from wait4
  struct rusage usage{};

  [[nodiscard]] bool exited() const;
  [[nodiscard]] int exit_code() const;  // -1 unless exited()
  [[nodiscard]] int signal() const;     // 0 unless killed by a signal
};

// A child we own: its pid and a pidfd (pollable, and safe against pid reuse). The
// destructor SIGKILLs and reaps a child that is still unreaped, so no error path can
// leave one behind (crun's cleanup_pid).
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(pid_t pid, UniqueFd pidfd) : pid_(pid), pidfd_(std::move(pidfd)) {}
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  [[nodiscard]] pid_t pid() const { return pid_; }
  // Readable once the process has exited (poll POLLIN). -1 when empty.
  [[nodiscard]] int pidfd() const { return pidfd_.get(); }
  [[nodiscard]] bool reaped() const { return pid_ <= 0; }

  // Sends `sig` through the pidfd (never to a recycled pid). No-op once reaped.
  [[nodiscard]] Status signal(int sig = SIGKILL) const;
  // Blocks until the process exits, reaps it and returns its status and rusage.
  [[nodiscard]] Result<ExitInfo> wait();
  // Reaps it if it has exited; nullopt while it runs.
  [[nodiscard]] Result<std::optional<ExitInfo>> try_wait();

 private:
  void kill_and_reap();
  pid_t pid_ = -1;
  UniqueFd pidfd_;
};

// The child-side step that failed, for the error message.
enum class SpawnStage { kSignals, kCgroup, kSetsid, kFds, kChdir, kRlimit, kHook, kExec };
[[nodiscard]] const char* to_string(SpawnStage stage);

// Starts `options.path`. On a failure in the child the error carries the errno and the
// step ("execve /usr/bin/python3: No such file or directory"); the child is reaped, and
// `failed_stage` (if given) says which child-side step failed.
[[nodiscard]] Result<ChildProcess> spawn(const SpawnOptions& options,
                                         SpawnStage* failed_stage = nullptr);

}  // namespace cordon::proc
