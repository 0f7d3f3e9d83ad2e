// The namespace backend: real isolation without a container engine. Each run gets new
// user, PID, network, mount, IPC, UTS and cgroup namespaces, a fresh minimal root
// filesystem (fs_plan.h), an unprivileged uid with no capabilities, the cordon-default
// seccomp policy, and cgroup limits (rlimits where no cgroup can be had). Timeout, cancel
// and the main process's exit kill the PID namespace's init, and with it every process of
// the sandbox. See docs/THREAT_MODEL.md for what holds and what does not.
#pragma once

#include <sys/resource.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cordon/backend.h"
#include "cordon/policy/fs_plan.h"
#include "cordon/policy/seccomp_compiler.h"
#include "cordon/proc/limit_group.h"
#include "cordon/run_driver.h"
#include "cordon/session.h"
#include "cordon/unique_fd.h"
#include "cordon/warm_pool.h"
#include "sandbox_kernel.h"
#include "sandbox_plan.h"
#include "sandbox_process.h"
#include "uid_slot.h"

namespace cordon::ns {

class NamespaceSession;

// The interpreter a pooled sandbox started ahead of its run (NamespaceOptions::
// prestart_python, prestart_sh): how it was started, and the read ends of the stdout and
// stderr it was started with (the run's output pipes).
struct PrestartedInterpreter {
  // Its executable, argv (the loader or the placeholder), env, cwd and rlimits: what a run
  // must match (starts_as). A shell's env here leaves out the LD_PRELOAD it was started
  // with, which its library removes before the shell's main().
  SandboxPlan plan;
  UniqueFd stdout_read;
  UniqueFd stderr_read;
};

// A sandbox built for a run's shape (limits, tmpfs size), its init waiting for the code,
// with what it holds on the host: its uid slot and limit groups.
struct BuiltSandbox {
  UidSlot slot;
  HostIdentity host;
  CgroupCoverage coverage;
  std::optional<proc::LimitGroup> limits;
  std::optional<PrestartedInterpreter> prestarted;
  // A plain pooled sandbox's output pipes, made (read ends non-blocking) by the pool's
  // thread, so a run without stdin data takes them instead of making its own on its path.
  std::optional<RunPipes> pipes;
  SandboxProcess process;
};

// Whether a run of `run` may use an interpreter started as `started` was: the same
// interpreter, environment, cwd and rlimits, the code passed with -c, and no input file
// the interpreter's start-up would have read (the user site directory under HOME).
[[nodiscard]] bool starts_as(const SandboxPlan& run, const SandboxPlan& started);
// Whether a process planned as `run` would start as `started` did: the same executable,
// environment, cwd and rlimits (argv aside).
[[nodiscard]] bool same_start(const SandboxPlan& run, const SandboxPlan& started);

// A session's allow-list (issue #41): its proxy, started with the session and stopped with
// it, so the list's byte and connection limits count across its calls; and where the last
// call's report of connections ended.
struct SessionNetwork {
  std::unique_ptr<net::RunNetwork> proxy;
  net::RunNetwork::CallMark reported;
};

class NamespaceBackend final : public Backend {
 public:
  // Stores the options; the host is looked at by probe() and changed by prepare().
  explicit NamespaceBackend(NamespaceOptions options = {});
  ~NamespaceBackend() override;
  NamespaceBackend(const NamespaceBackend&) = delete;
  NamespaceBackend& operator=(const NamespaceBackend&) = delete;

  [[nodiscard]] std::string_view name() const override { return "namespace"; }
  [[nodiscard]] std::string_view version() const override { return "0.1.0"; }
  // Found once (discover()): the host layout, the seccomp program, cordon-ns-init, the
  // limit groups this host would give and the settings that refuse namespaces for certain
  // (no trial clone). Read-only.
  [[nodiscard]] Probe probe() const override;
  [[nodiscard]] Capabilities capabilities(const Limits& limits) const override;
  // Sweeps what a killed cordon left (its limit groups; as root its uid-slot files), then
  // starts the warm pools (NamespaceOptions::pool_size).
  [[nodiscard]] Result<void> prepare() override;
  [[nodiscard]] RunResult run(const RunRequest& request, const CancelToken& cancel,
                              RunObserver* observer) override;

  // The plan a run of `request` would apply, without running it (`cordon plan --json`).
  // Host ids are shown as they would be mapped (for root: the first uid slot).
  [[nodiscard]] Result<Plan> describe_plan(const RunRequest& request) const override;

  [[nodiscard]] const NamespaceOptions& options() const { return options_; }
  // The warm pool (NamespaceOptions::pool_size), or null; prepares the backend first.
  [[nodiscard]] WarmPool<BuiltSandbox>* pool() {
    (void)prepare();
    return pool_.get();
  }
  // The pool of sandboxes holding an interpreter of `language` started ahead
  // (NamespaceOptions::prestart_python, prestart_sh), or null; prepares the backend first.
  [[nodiscard]] WarmPool<BuiltSandbox>* prestart_pool(Language language) {
    (void)prepare();
    return started_pool(language);
  }
  [[nodiscard]] WarmPool<BuiltSandbox>* python_pool() { return prestart_pool(Language::kPython); }
  // Sessions of the default shape (session_pool_fits) built ahead, kernel started: kept
  // with the python pool (pool_size and prestart_python), or null; prepares first.
  using SessionPool = WarmPool<std::unique_ptr<NamespaceSession>>;
  [[nodiscard]] SessionPool* session_pool() {
    (void)prepare();
    return session_pool_.get();
  }
  // How many sessions were handed out of the session pool.
  [[nodiscard]] std::uint64_t pooled_sessions() const { return pooled_sessions_.load(); }
  // The pid of the cordon-ns-spawner helper now in use, or -1 (tests).
  [[nodiscard]] pid_t spawner_pid() const;
  // A session (issue #41): a sandbox built for `options.base`'s limits with a workspace
  // of `options.workspace_bytes` (NamespaceSession), its kernel started and answering. One of
  // the default shape comes from the session pool when one is ready (the pool builds another
  // in the background). This backend outlives it.
  [[nodiscard]] Result<std::unique_ptr<BackendSession>> open_session(
      const SessionOptions& options) override;
  // A session's sandbox (issue #41): built as a sandbox for a run of `shape` is, its limit
  // group made once here and kept for the session's life; no pool. Its calls go to it as
  // kSessionRun orders (SandboxProcess::launch_session), each planned by session_call_plan.
  [[nodiscard]] Result<BuiltSandbox> build_session(const RunRequest& shape,
                                                   std::chrono::steady_clock::time_point until);
  // One call's plan in the session's sandbox `built`: its command, environment, working
  // directory, rlimits and files (written by the init: the sandbox is built already).
  [[nodiscard]] Result<SandboxPlan> session_call_plan(const RunRequest& call,
                                                      const BuiltSandbox& built) const;
  // The session's python kernel in `session` for calls like `call` (its environment and
  // rlimits), with the relay to `proxy` when the session has an allow-list, waited for until
  // it answers or `until` (NamespaceSession::start_kernel).
  [[nodiscard]] Result<SandboxKernel> start_kernel(BuiltSandbox& session, const RunRequest& call,
                                                   const net::RunNetwork* proxy,
                                                   std::chrono::steady_clock::time_point until);
  // Runs `call` as the next call in the session's sandbox through its python kernel
  // (sandbox_kernel.h), launched first when `kernel` holds none, or holds one started ahead
  // (at the open) otherwise than `call` would start it (same_start): a python call is a cell in
  // the kernel's namespace, any other language the call's command line as a fresh process
  // the kernel starts (files persist, variables do not). A call that loses the kernel (its
  // timeout, cancel, the memory limit, its end, a broken protocol, a missing sweep) ends
  // every process of it, empties `kernel` and says state_lost; the sandbox stays. With
  // `network` (the session's allow-list, which `call` carries), each kernel gets the relay
  // to the session's proxy and the call's result what went through during it.
  [[nodiscard]] RunResult run_in_kernel(BuiltSandbox& session, std::optional<SandboxKernel>& kernel,
                                        SessionNetwork* network, const RunRequest& call,
                                        const CancelToken& cancel, RunObserver* observer);
  // How many runs were handed to a prestarted interpreter.
  [[nodiscard]] std::uint64_t prestarted_runs() const { return prestarted_runs_.load(); }

 private:
  // Builds a sandbox of `shape`'s limits and files; its plan in *plan.
  [[nodiscard]] Result<BuiltSandbox> build(const RunRequest& shape, bool want_tmp_fd,
                                           std::chrono::steady_clock::time_point until,
                                           std::optional<SandboxPlan>* plan) const;
  // A pooled sandbox with `language`'s interpreter started in it, waiting for its code.
  [[nodiscard]] Result<BuiltSandbox> build_prestarted(
      Language language, std::chrono::steady_clock::time_point until) const;
  // The prestarted pool for `language`, or null (none, or not prepared yet).
  [[nodiscard]] WarmPool<BuiltSandbox>* started_pool(Language language) const;
  // Whether a sandbox built for `shape` (a pool's) has the limit groups and tmpfs size
  // `request` needs.
  [[nodiscard]] bool pool_fits(const RunRequest& request, const RunRequest& shape) const;
  // Whether a session of `base` (its workspace size in scratch_bytes) may be a pooled one.
  [[nodiscard]] bool session_pool_fits(const RunRequest& base) const;
  // A session's sandbox built on a keeper of its own, its kernel started for `base`.
  [[nodiscard]] Result<std::unique_ptr<NamespaceSession>> make_session(RunRequest base,
                                                                       SessionNetwork network);
  // The plan of the kernel for calls like `call` (python, its environment and rlimits).
  [[nodiscard]] Result<SandboxPlan> kernel_plan(const RunRequest& call,
                                                const BuiltSandbox& session) const;
  // The launch of the kernel for calls like `call` (start_kernel without the wait).
  [[nodiscard]] Result<SandboxKernel> launch_kernel(BuiltSandbox& session, const RunRequest& call,
                                                    const net::RunNetwork* proxy) const;
  // Whether `request` may go to a prestarted interpreter (the plan's check is starts_as).
  [[nodiscard]] bool prestart_fits(const RunRequest& request) const;
  // `filesystem_made`: for a pooled sandbox, whose root was made when it was built
  // (PlanInputs::filesystem_made).
  [[nodiscard]] Result<SandboxPlan> plan_for(const RunRequest& request, const HostIdentity& host,
                                             const CgroupCoverage& cgroups,
                                             bool filesystem_made = false) const;
  [[nodiscard]] bool cgroup_available(int kind) const;
  // Per proc::LimitKindCg (memory, processes): the cgroup limit in force, if any.
  using GroupFacts = std::optional<proc::LimitApplied>[3];
  // The one declaration of what a run with `limits` enforces when its limit groups are
  // `groups` (else rlimits): capabilities() renders it for the groups this host would give
  // (LimitGroup::planned), each run for the groups its sandbox has.
  [[nodiscard]] Capabilities declare(const Limits& limits, const GroupFacts& groups) const;
  // The driver's frame for a run of `request` in a sandbox with `groups` and `plan`: what
  // it enforces (declare() for the groups it really has), its timeout's mechanism, policy.
  // With `memo` (a session kernel's), the declaration is taken from it when it was made for
  // `request`'s limits, and kept in it otherwise.
  [[nodiscard]] RunFrame frame_for(const RunSetup& setup, const RunRequest& request,
                                   const std::optional<proc::LimitGroup>& groups,
                                   const SandboxPlan& plan,
                                   SandboxKernel::CallMemo* memo = nullptr) const;
  // The helper that clones set-up processes (NamespaceOptions::setup_spawner), started on
  // first use and again if it died; null: this process clones.
  [[nodiscard]] Result<std::shared_ptr<SetupSpawner>> spawner_for_build() const;
  // Fills in the host facts below, once, whichever call needs them first; read-only.
  void discover() const;

  NamespaceOptions options_;
  bool root_ = false;
  std::filesystem::path runtime_dir_;
  // The host facts (discover()); written once, under discovered_, then only read.
  mutable std::once_flag discovered_;
  mutable std::optional<policy::HostLayout> layout_;
  mutable std::optional<policy::SeccompProgram> seccomp_;
  mutable UniqueFd init_exe_;  // O_PATH of cordon-ns-init, exec'd by the sandbox via execveat
  mutable UniqueFd dev_null_;  // a run's stdin when it has no stdin data
  // cordon-sh-preload.so in a sealed memfd (NamespaceOptions::prestart_sh), read by prepare()
  // for the sh pool's builds, which give it to each prestarted shell as fd 5; unset when
  // the library was not found (no shell is prestarted).
  UniqueFd sh_preload_;
  // Our own hard RLIMIT_NOFILE, which the code's cannot exceed: read once (cordon never
  // changes it; raising it takes CAP_SYS_RESOURCE), not with a syscall on every run's path.
  mutable std::optional<rlim_t> nofile_hard_;
  mutable std::string limit_unavailable_[3];  // per proc::LimitKindCg; empty = available
  // Per proc::LimitKindCg: what a run's group will report as enforced (LimitGroup::planned).
  mutable std::optional<proc::LimitApplied> limit_planned_[3];
  mutable Probe probe_;
  PrepareOnce prepared_;
  RunRequest pool_shape_;     // the request a pooled sandbox is built for
  RunRequest python_shape_;   // the same, for python with the loader as its code
  RunRequest sh_shape_;       // the same, for sh with kShPlaceholder as its code
  RunRequest session_shape_;  // a session of the default options: what the session pool holds
  std::atomic<std::uint64_t> prestarted_runs_{0};
  std::atomic<std::uint64_t> pooled_sessions_{0};
  // Memos of what every run asks again with, on a server, nearly always the same inputs:
  // the last capabilities() answer (check_request builds the declaration on each run,
  // ~50 us here) and each language's interpreter as the sandbox sees it (a lookup walks
  // PATH and resolves symlinks: five syscalls). An interpreter removed since is an exec
  // failure the run reports; only interpreters found are kept.
  mutable std::mutex memo_mutex_;
  mutable std::optional<std::pair<Limits, Capabilities>> last_capabilities_;
  mutable std::map<Language, std::filesystem::path> interpreters_;
  mutable std::mutex spawner_mutex_;
  mutable std::shared_ptr<SetupSpawner> spawner_;  // outlives the pools' builds (below)
  // Last: their threads use everything above.
  std::unique_ptr<WarmPool<BuiltSandbox>> pool_;
  std::unique_ptr<WarmPool<BuiltSandbox>> python_pool_;
  std::unique_ptr<WarmPool<BuiltSandbox>> sh_pool_;
  // Its sessions hold a reference to this backend: destroyed (closed) first.
  std::unique_ptr<SessionPool> session_pool_;
};

// Where cordon-ns-init is: $CORDON_LIBEXEC_DIR, else the libexec folder of this tree
// (cordon/install_layout.h).
[[nodiscard]] std::optional<std::filesystem::path> find_ns_init();

// Why namespaces cannot be created here, in words a user can act on ("" = they can).
// Tries once (a child that exits at once, ~1.5 ms with its network namespace) and reads
// the sysctls that explain a refusal.
[[nodiscard]] std::string namespace_unavailable_reason(unsigned long clone_flags);

// What explains a refused clone with errno `err` ("; ..." clauses, or "").
[[nodiscard]] std::string namespace_refusal_hint(int err);

// A setting that refuses namespaces for certain, without trying ("" = none known). The
// backend's probe() uses this, not a trial clone: a `cordon run` must not pay ~1.5 ms
// for a clone the run itself makes anyway, and fails closed with the same explanation.
[[nodiscard]] std::string namespace_known_blocker();

}  // namespace cordon::ns
