// The OCI runtime binary (runc, crun, runsc) as cordon drives it: where it is, whether it
// can work on this host, and its subcommands run as bounded child processes.
//
// Every call passes `--root <state dir>` so cordon's containers live in a state directory
// of cordon's own, never mixed with other users of the runtime.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/proc/run_tool.h"
#include "cordon/proc/spawn.h"

namespace cordon::oci {

using Clock = std::chrono::steady_clock;

struct RuntimeProbe {
  std::string name;  // "runc"
  std::filesystem::path path;
  bool usable = false;
  std::string reason;  // why not, or caveats
  // runsc only: the gVisor platform its sandboxes run on ("ptrace", "kvm"); empty for runc.
  std::string platform;
};

// Looks `name` up on a fixed system PATH and says whether it can run containers here:
// runc needs root (cordon does not drive rootless runc); crun refuses a cgroup v1 hybrid
// host ("cgroups in hybrid mode not supported"), which is read from the mounts without
// running it; runsc (gVisor, issue #18) on the platform runsc_platform_for() chooses
// (runsc_platform.h; `runsc_platform` is the backend option, empty: none), refused with
// the reason when that platform cannot be used.
[[nodiscard]] RuntimeProbe probe_runtime(const std::string& name,
                                         const std::string& runsc_platform = {});

// The global options every call of this runtime takes, after `--root` and before the
// subcommand. runsc's decide what a sandbox is and are not kept in its state, so `run`,
// `kill` and `delete` (a later instance's sweep too) must all be given the same set: the
// platform; no network stack but loopback (`--network=none`; the host's with the network
// namespace off, a positive control only); connecting to host unix sockets bound into the
// sandbox (`--host-uds=open`: the init's control socket, the egress proxy's; not `create`,
// which would let the sandbox make host-visible sockets); the config's seccomp filter,
// which runsc ignores without `--oci-seccomp`. runc takes none.
[[nodiscard]] std::vector<std::string> runtime_global_args(const RuntimeProbe& probe,
                                                           bool network_namespace, bool seccomp);

// True when /sys/fs/cgroup holds v1 hierarchies and an empty v2 tree beside them.
[[nodiscard]] bool cgroup_hybrid_host();

// Found and run as every system tool is (cordon/proc/run_tool.h).
using proc::find_tool;
using proc::run_tool;
using proc::ToolIo;

class RuntimeCli {
 public:
  RuntimeCli() = default;
  RuntimeCli(std::filesystem::path binary, std::filesystem::path state_root,
             std::vector<std::string> global_args = {})
      : binary_(std::move(binary)),
        state_root_(std::move(state_root)),
        global_args_(std::move(global_args)) {}

  // argv for `<runtime> --root <state> <global args...> <args...>`.
  [[nodiscard]] std::vector<std::string> argv(const std::vector<std::string>& args) const;

  // Runs a short subcommand (kill, delete, run --detach) to completion; fails with its
  // stderr when it exits non-zero, and kills it at `until`.
  [[nodiscard]] Status call(const std::vector<std::string>& args, Clock::time_point until,
                            const std::vector<int>& keep_fds = {}, int stdin_fd = -1,
                            int stdout_fd = -1, int stderr_fd = -1) const;

  // Starts a long-running subcommand (an attached `run`) as a child cordon owns, with
  // `stdin_fd`/`stdout_fd`/`stderr_fd` as its stdio; the ChildProcess kills and reaps it
  // if nobody waited for it. With `subreaper` (cordon-init), the child is cordon-init's
  // subreaper role and the runtime its child (roles.h): the child then ends only once the
  // runtime did and every process its tree orphaned was reaped, with the runtime's status.
  [[nodiscard]] Result<proc::ChildProcess> start(const std::vector<std::string>& args, int stdin_fd,
                                                 int stdout_fd, int stderr_fd,
                                                 const std::filesystem::path& subreaper = {}) const;

  // `delete --force <id>` (kills it first if it runs); a missing container is not an error.
  [[nodiscard]] Status destroy(const std::string& id, Clock::time_point until) const;

  [[nodiscard]] const std::filesystem::path& binary() const { return binary_; }
  [[nodiscard]] const std::filesystem::path& state_root() const { return state_root_; }
  [[nodiscard]] const std::vector<std::string>& global_args() const { return global_args_; }

 private:
  std::filesystem::path binary_;
  std::filesystem::path state_root_;
  std::vector<std::string> global_args_;
};

}  // namespace cordon::oci
