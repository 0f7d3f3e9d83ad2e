// The apply step, in the child: turns a SandboxPlan (prepared by the parent into plain
// arrays of C strings, see PreparedChild) into the sandbox, then starts the code and
// becomes cordon-ns-init.
//
// Process layout (parent = the cordon thread in run()):
//   parent --clone(new user/pid/mount/net/ipc/uts/cgroup ns, no CLONE_VM)--> B
//   B is PID 1 of the new PID namespace. It places itself in the cgroup v1 limit groups
//   (through fds the parent opened), waits for the parent's "go" (id maps written, any v2
//   groups joined), builds the root filesystem, sets the hostname, brings `lo` up, then
//   starts C with clone(CLONE_VM|CLONE_VFORK): C drops to the sandbox user, drops every
//   capability, closes every fd but 0/1/2, applies rlimits and seccomp (last) and execs
//   the code. When C has exec'd, B execs cordon-ns-init (a small static binary, clean
//   environment, fds /dev/null and the report pipe only), which reaps, forwards the main
//   process's status and exits, taking the namespace with it.
//
// Why B is not a vfork child like proc::spawn's: it must wait for the parent to write its
// uid_map, and a vfork parent is suspended. Why no CLONE_VM either: a CLONE_VM child that
// runs concurrently with the parent shares the parent thread's TLS (errno, glibc state),
// so its failing syscalls would clobber the parent's errno. B is therefore a copy-on-write
// copy of the parent (measured: see the bench); it still runs async-signal-safe code only,
// since the parent may be multi-threaded and a lock (malloc's) may have been held at clone.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/policy/fs_plan.h"
#include "cordon/policy/seccomp_compiler.h"
#include "cordon/proc/spawn.h"
#include "sandbox_plan.h"

namespace cordon::ns {

// Which child-side step failed, reported to the parent with the errno.
enum class ChildStage : std::int32_t {
  kFds = 1,
  kWaitGo,
  kGroups,
  kMount,
  kHostname,
  kLoopback,
  kTmpFd,
  kStartCode,
  kSession,
  kChdir,
  kIds,
  kRlimit,
  kCapabilities,
  kSeccomp,
  kExecCode,
  kExecInit,
  kLimitGroups,
};
[[nodiscard]] const char* to_string(ChildStage stage);

// One message on the set-up channel (SOCK_SEQPACKET). A failure carries stage and errno;
// kTmpFd carries the sandbox's /tmp as an SCM_RIGHTS fd (for artifacts). EOF on the
// channel means both B and C have exec'd: the code runs.
struct ChildMessage {
  std::int32_t stage = 0;
  std::int32_t error = 0;  // 0: not a failure (kTmpFd)
  std::int32_t step = -1;  // index of the mount step for kMount
};

struct ChildMount {
  policy::FsOp op = policy::FsOp::kMkdir;
  const char* target = nullptr;  // staged path (under kStaging) until pivot_root
  const char* source = nullptr;
  const char* data = nullptr;
  std::size_t data_len = 0;
  std::uint32_t mode = 0;
  unsigned long flags = 0;  // MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY as planned
  bool read_only = false;
  bool optional = false;
};

// Everything B and C read: plain data and pointers into PreparedChild's storage, which B
// sees in its copy of the parent's memory and C shares with B.
struct ChildPlan {
  // Parent-side fds; B moves them to fixed slots first (see child_setup.cpp).
  int go_fd = -1;
  int channel_fd = -1;
  int report_fd = -1;
  int init_exe_fd = -1;
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // The `tasks` files of the cgroup v1 limit groups (LimitGroup::self_join_fds): B writes
  // "0" to each before anything else, so it and everything it starts are inside them.
  static constexpr std::size_t kMaxJoinFds = 8;
  int join_fds[kMaxJoinFds] = {};
  std::size_t join_fd_count = 0;

  const ChildMount* mounts = nullptr;
  std::size_t mount_count = 0;
  const char* hostname = nullptr;
  std::size_t hostname_len = 0;
  bool loopback_up = true;
  bool clear_groups = false;
  bool drop_capabilities = true;
  bool send_tmp_fd = false;
  int cap_last = 40;

  uid_t uid = 65534;
  gid_t gid = 65534;
  const char* cwd = "/tmp";
  const char* exe = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const proc::RlimitSetting* rlimits = nullptr;
  std::size_t rlimit_count = 0;
  const policy::SeccompProgram* seccomp = nullptr;  // null: no filter (test only)

  char* code_stack = nullptr;  // for C, inside B's memory
  std::size_t code_stack_size = 0;
  char* const* init_argv = nullptr;  // {"cordon-ns-init", main_pid_text, nullptr}
  char* main_pid_text = nullptr;     // B writes C's pid (as PID-namespace number) here
  char* const* init_envp = nullptr;  // empty

  // Written by C on failure (it shares B's memory; B is suspended until C execs or exits).
  ChildStage code_stage = ChildStage::kExecCode;
  int code_error = 0;
};

// The parent-side owner of a ChildPlan and of everything it points to.
class PreparedChild {
 public:
  // `seccomp` must outlive the run (the backend compiles it once). fds are the parent's.
  struct Fds {
    int go = -1, channel = -1, report = -1, init_exe = -1, in = -1, out = -1, err = -1;
    const int* join = nullptr;  // the limit groups' self-join fds (at most kMaxJoinFds)
    std::size_t join_count = 0;
  };
  [[nodiscard]] static Result<std::unique_ptr<PreparedChild>> make(
      const SandboxPlan& plan, const policy::SeccompProgram* seccomp, const Fds& fds,
      bool want_tmp_fd);

  PreparedChild(const PreparedChild&) = delete;
  PreparedChild& operator=(const PreparedChild&) = delete;
  ~PreparedChild();

  [[nodiscard]] ChildPlan* plan() { return &plan_; }
  // Describes mount step `index` for an error message.
  [[nodiscard]] std::string describe_mount(int index) const;
  // The stack B starts on (top end), inside a mapping this object owns.
  [[nodiscard]] void* init_stack_top() const;

 private:
  PreparedChild() = default;
  std::deque<std::string> strings_;  // a deque never moves elements: c_str() stays valid
  std::vector<ChildMount> mounts_;
  std::vector<char*> argv_, envp_, init_argv_, init_envp_;
  std::vector<proc::RlimitSetting> rlimits_;
  char pid_text_[16] = {};
  void* stacks_ = nullptr;
  std::size_t stacks_size_ = 0;
  ChildPlan plan_;
};

// Where the new root is assembled inside the child's own mount namespace: a tmpfs
// mounted over this existing directory, invisible to the host (mounts are private).
inline constexpr const char* kStaging = "/tmp";

// The entry point of B (for clone): never returns; execs cordon-ns-init or _exits.
int sandbox_child_main(void* arg);

}  // namespace cordon::ns
