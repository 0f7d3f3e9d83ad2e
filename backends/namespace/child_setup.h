// The apply step, in the child: turns a SandboxPlan (prepared by the parent into plain
// arrays of C strings, see PreparedChild) into the sandbox, then becomes cordon-ns-init,
// which waits for the code (init_protocol.h).
//
// Process layout (parent = the cordon thread that builds the sandbox, or, with a pool,
// cordon-ns-spawner, which clones B with CLONE_PARENT so that B is still cordon's child and
// its parent-death signal follows the spawner's keeper thread: setup_spawner.h):
//   parent --clone(new user/pid/mount/net/ipc/uts/cgroup ns, no CLONE_VM)--> B
//   B is PID 1 of the new PID namespace. It places itself in the cgroup v1 limit groups
//   (through fds the parent opened), waits for the parent's "go" (id maps written, any v2
//   groups joined), builds the root filesystem, sets the hostname, brings `lo` up, empties
//   its capability sets (bounding set included: nothing started later could do it without
//   CAP_SETPCAP), sets no_new_privs and installs the seccomp filter, then execs
//   cordon-ns-init (a small static binary, clean environment, fds /dev/null, the report
//   pipe and the control socket only). The filter is compiled into the kernel once per
//   sandbox, here, not on the code's path, and confines the init too. The init receives the
//   code's order, starts the code and reaps; see core/libexec/init/ns_role.cpp. No code ever runs
//   while a process of the sandbox holds a copy of the caller's memory.
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
#include "cordon/proc/ns_init_channel.h"
#include "sandbox_plan.h"

namespace cordon::ns {

// Which child-side step failed, reported to the parent with the errno in an init::Event
// (init_protocol.h) on the set-up channel.
enum class ChildStage : std::int32_t {
  kFds = 1,
  kWaitGo,
  kGroups,
  kMount,
  kHostname,
  kLoopback,
  kTmpFd,
  kIds,
  kCapabilities,
  kSeccomp,
  kExecInit,
  kLimitGroups,
};
[[nodiscard]] const char* to_string(ChildStage stage);

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

// Everything B reads: plain data and pointers into PreparedChild's storage, which B sees
// in its copy of the parent's memory.
struct ChildPlan {
  // Parent-side fds; B moves them to fixed slots first (see child_setup.cpp).
  int go_fd = -1;
  int channel_fd = -1;
  int report_fd = -1;
  int init_exe_fd = -1;
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
  // The compiled filter (policy::SeccompProgram's instructions); null: no_new_privs only
  // (test only).
  const sock_filter* seccomp_filter = nullptr;
  std::size_t seccomp_count = 0;

  uid_t uid = 65534;
  gid_t gid = 65534;
  char* const* init_argv = nullptr;  // {"cordon-ns-init", nullptr}
  char* const* init_envp = nullptr;  // empty
};

// The parent-side owner of a ChildPlan and of everything it points to.
class PreparedChild {
 public:
  // fds are the parent's.
  struct Fds {
    int go = -1, channel = -1, report = -1, init_exe = -1;
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
  std::vector<char*> init_argv_, init_envp_;
  void* stacks_ = nullptr;
  std::size_t stacks_size_ = 0;
  ChildPlan plan_;
};

// The stack the set-up process starts on (it is a copy of its parent's memory, so one
// mapping per parent serves every clone).
inline constexpr std::size_t kSetupStackBytes = 128 * 1024;

// Where the new root is assembled inside the child's own mount namespace: a tmpfs
// mounted over this existing directory, invisible to the host (mounts are private).
inline constexpr const char* kStaging = "/tmp";

// The entry point of B (for clone): never returns; execs cordon-ns-init or _exits.
int sandbox_child_main(void* arg);

// Clones B running sandbox_child_main(plan) on `stack_top`, with every signal blocked
// across the clone (B resets the dispositions before any can be delivered) and CLONE_PIDFD
// (*pidfd). `flags` adds to that: the plan's namespaces, and CLONE_PARENT in the spawner.
// The pid, or -1 with errno. Used by cordon (sandbox_process.cpp) and cordon-ns-spawner.
long clone_setup_process(void* stack_top, unsigned long flags, ChildPlan* plan, int* pidfd);

}  // namespace cordon::ns
