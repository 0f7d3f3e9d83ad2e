// NamespaceBackend::run as a short ordered list of steps (nsjail's containProc), each
// returning a sandbox error on failure; RAII owners undo whatever was done.
#include "namespace_backend.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include "cordon/claims.h"
#include "cordon/install_layout.h"
#include "cordon/interpreter.h"
#include "cordon/kernel_call.h"
#include "cordon/limit_check.h"
#include "cordon/net/run_network.h"
#include "cordon/policy/syscall_policy.h"
#include "cordon/proc/pipe.h"
#include "cordon/run_driver.h"
#include "cordon/session_workspace.h"
#include "cordon/units.h"
#include "keeper_thread.h"
#include "memfd_blob.h"
#include "namespace_session.h"
#include "prebuilt_seccomp.h"
#include "prestart_loader.h"

namespace cordon::ns {
namespace {

using Clock = std::chrono::steady_clock;

// cordon-sh-preload.so (NamespaceOptions::prestart_sh), read once into a sealed memfd: each
// prestarted shell loads it through /proc/self/fd/5, so nothing of it is on the sandbox's
// filesystem or names a host path, and no sandbox can change what the next one loads.
// Unset when the library is not found or cannot be read.
UniqueFd load_sh_preload() {
  const auto path = find_libexec_helper("cordon-sh-preload.so");
  if (!path) return {};
  std::ifstream in(*path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!in.good() && !in.eof()) return {};
  if (bytes.empty()) return {};
  auto fd = memfd_holding("cordon-sh-preload", bytes, "the shell's preload library",
                          /*sealed=*/true);
  return fd ? std::move(*fd) : UniqueFd{};
}

// The limit values this backend honours (LimitRange), measured on Debian 12, kernel 6.18,
// cgroup v1. Memory: the set-up process, the init and `python3 -c 'import json'` start in
// a 6 MiB memory cgroup, sh in 512 KiB; below 256 KiB the set-up process dies without a
// word. 16 MiB leaves headroom. Without a cgroup, RLIMIT_AS per process.
constexpr LimitRange kCgroupMemoryRange{16ULL << 20, kCgroupMemoryMax};
// Processes: the code's main process is all a run needs; pids.max (or RLIMIT_NPROC) is
// set one above the request, for the namespace's init.
constexpr LimitRange kProcessRange{1, kPidsMaxLimit - 1};
// The rlimit fallbacks (no cgroup) cannot go above this process's hard limits.
LimitRange rlimit_memory_range() {
  return rlimit_range(RLIMIT_AS, kMinAddressSpaceBytes, kCgroupMemoryMax);
}
LimitRange rlimit_process_range() {
  return rlimit_range(RLIMIT_NPROC, kProcessRange.min, kProcessRange.max, 1, /*reserved=*/1);
}

// No variables, allow-list (the proxy's) or CPU limit (an rlimit) of its own: what changes
// how an interpreter would have started, which one started ahead was started without.
bool starts_plain(const RunRequest& request) {
  return request.env.empty() && !request.network.any() && !request.limits.cpu_time;
}

}  // namespace

NamespaceBackend::NamespaceBackend(NamespaceOptions options)
    : options_(std::move(options)), root_(::geteuid() == 0) {
  runtime_dir_ = options_.runtime_dir.empty() ? default_runtime_dir()
                                              : std::filesystem::path(options_.runtime_dir);
  if (options_.pool_size > 0 && options_.prestart_python) {
    python_shape_.language = Language::kPython;
    python_shape_.code = std::string(kPythonLoader);
  }
  if (options_.pool_size > 0 && options_.prestart_sh) {
    sh_shape_.language = Language::kSh;
    sh_shape_.code = std::string(kShPlaceholder);
  }
  session_shape_.language = Language::kPython;
  session_shape_.limits.scratch_bytes = kDefaultWorkspaceBytes;
}

void NamespaceBackend::discover() const {
  std::call_once(discovered_, [this] {
    for (const auto kind :
         {proc::LimitKindCg::kMemory, proc::LimitKindCg::kProcesses, proc::LimitKindCg::kCpu}) {
      limit_unavailable_[static_cast<int>(kind)] =
          options_.use_cgroups ? proc::LimitGroup::unavailable_reason(kind)
                               : "cgroups switched off for this backend instance";
      if (options_.use_cgroups)
        limit_planned_[static_cast<int>(kind)] = proc::LimitGroup::planned(kind);
    }

    std::string why;
    if (auto layout = policy::probe_host_layout(options_.system_root)) {
      layout_ = *layout;
    } else {
      why = "cannot read the host's filesystem layout: " + layout.error().describe();
    }
    // Prebuilt at build time for this architecture; compiled here only if that is stale.
    if (auto program = default_seccomp_program()) {
      seccomp_ = std::move(*program);
    } else if (why.empty()) {
      why = "cannot compile the seccomp policy: " + program.error().describe();
    }
    if (auto init = find_ns_init()) {
      // O_PATH: only for execveat; it keeps working after the sandbox's pivot_root.
      init_exe_.reset(::open(init->c_str(), O_PATH | O_CLOEXEC));
    }
    // What a run without stdin data reads: opened once, not on every run's path (a run
    // whose open failed here opens its own in SandboxProcess::send_order).
    dev_null_.reset(::open("/dev/null", O_RDWR | O_CLOEXEC));  // as send_order opens it
    nofile_hard_ = hard_rlimit(RLIMIT_NOFILE);
    if (!init_exe_ && why.empty()) {
      why = "the cordon-init helper was not found (set CORDON_LIBEXEC_DIR)";
    }
    if (why.empty()) why = namespace_known_blocker();
    if (!why.empty()) {
      probe_ = {false, why};
      return;
    }
    std::string reason = root_ ? "runs as root: each run maps its sandbox user to its own host uid"
                               : "runs in an unprivileged user namespace";
    if (!cgroup_available(static_cast<int>(proc::LimitKindCg::kMemory)) ||
        !cgroup_available(static_cast<int>(proc::LimitKindCg::kProcesses))) {
      reason +=
          "; no cgroup for memory/process limits here, so they fall back to rlimits (per "
          "process or per uid) and an OOM kill cannot be reported";
    }
    probe_ = {true, reason};
  });
}

Probe NamespaceBackend::probe() const {
  discover();
  return probe_;
}

Result<void> NamespaceBackend::prepare() {
  return prepared_([this]() -> Result<void> {
    discover();
    // Leftovers of a cordon that was killed: its limit groups and its uid-slot files.
    (void)proc::sweep_stale_limit_groups();
    if (root_) (void)sweep_uid_slots(runtime_dir_);
    if (!probe_.available || options_.pool_size == 0) return {};
    // Built for a request with the default limits and no files; runs of that shape take
    // one (pool_fits). Artifacts may be asked for later, so each keeps its /tmp.
    pool_ = std::make_unique<WarmPool<BuiltSandbox>>(
        options_.pool_size,
        [this]() -> Result<BuiltSandbox> {
          std::optional<SandboxPlan> plan;
          auto built =
              build(pool_shape_, /*want_tmp_fd=*/true, Clock::now() + kDefaultSetupBound, &plan);
          if (!built) return built;
          auto pipes = make_run_pipes(pool_shape_);  // the shape has no stdin data
          if (!pipes) return std::unexpected(pipes.error());
          // What the run's output pump would do first, done here.
          for (const proc::Pipe* p : {&pipes->out, &pipes->err}) {
            if (auto st = proc::set_nonblocking(p->read.get()); !st) {
              return std::unexpected(st.error());
            }
          }
          built->pipes = std::move(*pipes);
          return built;
        },
        // Killing the init (ChildProcess) comes before removing the limit groups and
        // freeing the uid slot: BuiltSandbox's members go in reverse order.
        [](BuiltSandbox& b) { const BuiltSandbox gone = std::move(b); });
    const auto started_pool_of = [this](Language language) {
      return std::make_unique<WarmPool<BuiltSandbox>>(
          options_.pool_size,
          [this, language]() -> Result<BuiltSandbox> {
            return build_prestarted(language, Clock::now() + kDefaultSetupBound);
          },
          [](BuiltSandbox& b) { const BuiltSandbox gone = std::move(b); });
    };
    if (options_.prestart_python) python_pool_ = started_pool_of(Language::kPython);
    // Sessions of the default shape with their kernel started, kept beside the python pool:
    // a session's open then costs no more than a pooled one-shot python call. Each is handed
    // out once (a closed session is destroyed, never pooled again), so nothing of one
    // session reaches another; each is built on a keeper of its own (make_session), so it
    // outlives the pool's thread and still dies with cordon.
    if (options_.prestart_python) {
      session_pool_ = std::make_unique<SessionPool>(
          options_.pool_size,
          [this]() -> Result<std::unique_ptr<NamespaceSession>> {
            return make_session(session_shape_, SessionNetwork{});
          },
          [](std::unique_ptr<NamespaceSession>& s) { s.reset(); });
    }
    // Without its library a shell cannot take its code after it started: no pool then
    // (every build would fail), and sh runs take the plain one.
    if (options_.prestart_sh) sh_preload_ = load_sh_preload();
    if (sh_preload_) sh_pool_ = started_pool_of(Language::kSh);
    return {};
  });
}

NamespaceBackend::~NamespaceBackend() = default;

bool NamespaceBackend::cgroup_available(int kind) const { return limit_unavailable_[kind].empty(); }

Capabilities NamespaceBackend::capabilities(const Limits& limits) const {
  discover();
  {
    const std::lock_guard lock(memo_mutex_);
    if (last_capabilities_ && last_capabilities_->first == limits) {
      return last_capabilities_->second;
    }
  }
  // What a run's limit groups will report as enforced (LimitGroup::planned).
  GroupFacts planned;
  for (const auto kind : {proc::LimitKindCg::kMemory, proc::LimitKindCg::kProcesses}) {
    if (cgroup_available(static_cast<int>(kind))) {
      planned[static_cast<int>(kind)] = limit_planned_[static_cast<int>(kind)];
    }
  }
  Capabilities declared = declare(limits, planned);
  const std::lock_guard lock(memo_mutex_);
  last_capabilities_.emplace(limits, declared);
  return declared;
}

Capabilities NamespaceBackend::declare(const Limits& limits, const GroupFacts& groups) const {
  using Unit = Quantity::Unit;
  const std::uint64_t tmp = limits.scratch_bytes.value_or(kDefaultScratchBytes);
  // Memory and processes are never unlimited: the request's ceiling or the default one.
  const Limits ceilings = with_default_ceilings(limits, options_);
  const std::optional<proc::LimitApplied>& mem_group =
      groups[static_cast<int>(proc::LimitKindCg::kMemory)];
  const std::optional<proc::LimitApplied>& pids_group =
      groups[static_cast<int>(proc::LimitKindCg::kProcesses)];
  Capabilities caps;
  caps.aspects.push_back(network_namespace_claim(
      options_.network_namespace,
      "no interface but lo and no route out; the host's loopback and abstract unix sockets are "
      "unreachable",
      /*egress_proxy=*/options_.network_namespace));
  Mechanism root{"root_fs", {{"root", "fresh"}, {"tmpfs_bytes", std::to_string(tmp)}}};
  if (!options_.system_root.empty()) {
    root.params.emplace_back("environment", policy::environment_claim(options_.system_root,
                                                                      options_.system_root_digest));
  }
  caps.aspects.push_back(claim(
      Aspect::kFilesystem, Enforcement::kEnforced, root, std::nullopt,
      std::string("mount namespace with a new root (pivot_root, old root detached): ") +
          (options_.system_root.empty() ? std::string("/usr and the host's /bin, /lib* read-only") +
                                              (options_.hide_usr_local ? ", /usr/local hidden" : "")
                                        : "/usr, /bin and /lib* of the environment at " +
                                              options_.system_root + " read-only, nosuid, nodev") +
          ", minimal /etc and /dev, fresh /proc with kernel knobs read-only; the host's "
          "/root, /home, /tmp, /run and /var are not visible; writable only /tmp and "
          "/dev/shm"));
  caps.aspects.push_back(claim(Aspect::kEnvironment, Enforcement::kEnforced,
                               {"clean_environment", {{"mount_namespace", "yes"}}}, std::nullopt,
                               "only PATH, HOME, LANG and the request's variables; no process "
                               "inside (PID 1 included) holds the caller's environment, fds or "
                               "memory; host credential files are not mounted"));
  caps.aspects.push_back(claim(
      Aspect::kProcessTree, Enforcement::kEnforced, {"namespace", {{"type", "pid"}}}, std::nullopt,
      "the code sees only its own processes; the whole namespace is "
      "killed when the main process ends, at the deadline and on "
      "cancel; it runs as uid 65534 with no capabilities and "
      "no_new_privs" +
          std::string(root_ ? ", mapped to a host uid of its own" : ""),
      std::nullopt,
      root_ ? std::vector<std::string>{std::string(kRoot)} : std::vector<std::string>{}));
  caps.aspects.push_back(seccomp_claim(
      options_.seccomp, seccomp_ ? seccomp_->policy_name : "",
      seccomp_ ? seccomp_->policy_version : 0, seccomp_ ? seccomp_->policy_hash : "",
      "allow-list; unknown syscalls fail with ENOSYS, dangerous ones (ptrace, mount, unshare, "
      "keyctl, bpf, ...) with EPERM; other architectures are killed"));
  const Quantity memory{Unit::kBytes, *ceilings.memory_bytes, ""};
  if (mem_group) {
    caps.aspects.push_back(claim(
        Aspect::kMemory, Enforcement::kEnforced, cgroup_mechanism(mem_group->mechanism), memory,
        "the whole sandbox, " + mem_group->detail + "; an OOM kill is reported as oom_killed",
        kCgroupMemoryRange, ceiling_conditions(limits.memory_bytes.has_value())));
  } else {
    std::vector<std::string> conditions = ceiling_conditions(limits.memory_bytes.has_value());
    conditions.emplace_back(kNoCgroup);
    caps.aspects.push_back(claim(
        Aspect::kMemory, Enforcement::kPartial,
        {"rlimit", {{"resource", "RLIMIT_AS"}, {"per", "process"}}}, memory,
        "no cgroup here (" + limit_unavailable_[static_cast<int>(proc::LimitKindCg::kMemory)] +
            "): address space per process, not the sandbox's total; an OOM kill cannot "
            "be reported",
        rlimit_memory_range(), std::move(conditions)));
  }
  const Quantity processes{Unit::kCount, *ceilings.max_processes, ""};
  if (pids_group) {
    caps.aspects.push_back(
        claim(Aspect::kProcesses, Enforcement::kEnforced, cgroup_mechanism(pids_group->mechanism),
              processes, "every process and thread of the sandbox (its init not counted)",
              kProcessRange, ceiling_conditions(limits.max_processes.has_value())));
  } else {
    std::vector<std::string> conditions = ceiling_conditions(limits.max_processes.has_value());
    conditions.emplace_back(kNoCgroup);
    if (root_) conditions.emplace_back(kRoot);
    caps.aspects.push_back(claim(
        Aspect::kProcesses, root_ ? Enforcement::kEnforced : Enforcement::kPartial,
        {"rlimit", {{"resource", "RLIMIT_NPROC"}, {"per", root_ ? "run_uid" : "uid"}}}, processes,
        root_ ? "the sandbox's host uid is its own, so the count is the sandbox's"
              : "counts every process of the user running cordon, not only the run's",
        rlimit_process_range(), std::move(conditions)));
  }
  if (limits.cpu_time) {
    caps.aspects.push_back(rlimit_cpu_claim(*limits.cpu_time, "sandbox"));
  } else {
    // Not limited, as none was asked for; the range is what a request may ask.
    caps.aspects.push_back(no_claim(
        Aspect::kCpu, "CPU time is bounded only by the wall-clock timeout", rlimit_cpu_range()));
  }
  caps.aspects.push_back(scratch_claim(tmp, "; the host's disk is never written"));
  caps.aspects.push_back(output_claim(effective_output_cap(limits)));
  caps.aspects.push_back(claim(Aspect::kTimeout, Enforcement::kEnforced,
                               {"deadline", {{"kill", "pid_namespace_init"}}}, std::nullopt,
                               "the kernel kills every process of the sandbox at once, "
                               "including setsid'd and daemonised ones; also when cordon "
                               "itself dies"));
  return caps;
}

Result<SandboxPlan> NamespaceBackend::plan_for(const RunRequest& request, const HostIdentity& host,
                                               const CgroupCoverage& cgroups,
                                               bool filesystem_made) const {
  if (!layout_) return fail(ErrorCode::kUnavailable, probe_.reason);
  PlanInputs in;
  in.request = &request;
  in.filesystem_made = filesystem_made;
  in.options = options_;
  in.layout = *layout_;
  in.host = host;
  in.cgroups = cgroups;
  if (seccomp_) {
    in.policy_name = seccomp_->policy_name;
    in.policy_version = seccomp_->policy_version;
    in.policy_hash = seccomp_->policy_hash;
  }
  in.nofile_hard = nofile_hard_;
  in.find_interpreter = [this](Language language, std::string_view search_path,
                               const std::filesystem::path& root) -> Result<std::filesystem::path> {
    {
      const std::lock_guard lock(memo_mutex_);
      if (const auto found = interpreters_.find(language); found != interpreters_.end()) {
        return found->second;
      }
    }
    auto found = find_interpreter(language, search_path, root);
    if (found) {
      const std::lock_guard lock(memo_mutex_);
      interpreters_.emplace(language, *found);
    }
    return found;
  };
  return make_sandbox_plan(in);
}

Result<Plan> NamespaceBackend::describe_plan(const RunRequest& request) const {
  discover();
  if (auto st = check_request(*this, request); !st) return std::unexpected(st.error());
  HostIdentity host{root_, root_ ? options_.uid_base : ::getuid(),
                    root_ ? options_.uid_base : ::getgid()};
  CgroupCoverage cg;
  cg.memory = cgroup_available(static_cast<int>(proc::LimitKindCg::kMemory));
  cg.processes = cgroup_available(static_cast<int>(proc::LimitKindCg::kProcesses));
  auto plan = plan_for(request, host, cg);
  if (!plan) return std::unexpected(plan.error());
  Plan out = to_plan(*plan);
  out.backend_name = name();
  out.backend_version = version();
  // The limits in the declaration's words (claims.h), as `cordon backends` and a run's
  // `enforced` name them.
  out.limits = plan_limits(request, capabilities(request.limits));
  out.timeout_ms = effective_timeout(request).count();
  if (request.network.any()) out.network += net::plan_words(request.network);
  return out;
}

Result<BuiltSandbox> NamespaceBackend::build(const RunRequest& shape, bool want_tmp_fd,
                                             Clock::time_point until,
                                             std::optional<SandboxPlan>* plan) const {
  BuiltSandbox b;
  // Whose id the sandbox user maps to: for root a host uid of this sandbox's own.
  b.host = HostIdentity{root_, ::getuid(), ::getgid()};
  if (root_) {
    auto s = UidSlot::acquire(runtime_dir_, options_.uid_slots);
    if (!s) return fail(s.error().code, "uid slot: " + s.error().describe());
    b.slot = std::move(*s);
    b.host.uid = b.host.gid = options_.uid_base + b.slot.index();
  }

  // Limit groups (before the plan: what they cannot take falls back to rlimits). The init
  // counts as one process, so the pids limit is one above what was asked. Memory and
  // processes always have a ceiling: the request's or the default one.
  if (options_.use_cgroups) {
    Limits cg = with_default_ceilings(shape.limits, options_);
    *cg.max_processes += 1;
    auto group = proc::LimitGroup::create(cg);
    if (!group) return fail(group.error().code, "limit group: " + group.error().describe());
    b.limits = std::move(*group);
    b.coverage.memory = b.limits->has(proc::LimitKindCg::kMemory);
    b.coverage.processes = b.limits->has(proc::LimitKindCg::kProcesses);
  }

  // The plan: plain data, nothing applied yet.
  auto planned = plan_for(shape, b.host, b.coverage);
  if (!planned) return fail(planned.error().code, "plan: " + planned.error().describe());
  *plan = std::move(*planned);

  // The sandbox: namespaces, maps, limit groups, root filesystem (with the plan's files),
  // then its init, waiting for the code.
  SandboxStart start;
  start.plan = &**plan;
  start.seccomp = seccomp_ ? &*seccomp_ : nullptr;
  start.init_exe_fd = init_exe_.get();
  start.limits = b.limits ? &*b.limits : nullptr;
  start.want_tmp_fd = want_tmp_fd;
  start.before_go_for_test = options_.before_go_for_test;
  auto spawner = spawner_for_build();
  if (!spawner) return std::unexpected(spawner.error());
  start.spawner = spawner->get();
  auto process = SandboxProcess::start(start, until);
  if (!process) return std::unexpected(process.error());
  b.process = std::move(*process);
  return b;
}

RunFrame NamespaceBackend::frame_for(const RunSetup& setup, const RunRequest& request,
                                     const std::optional<proc::LimitGroup>& groups,
                                     const SandboxPlan& plan, SandboxKernel::CallMemo* memo) const {
  RunFrame frame = setup.frame();
  if (plan.seccomp) frame.policy = PolicyId{plan.policy_name, plan.policy_hash};
  if (memo != nullptr && memo->limits == request.limits) {
    frame.timeout_mechanism = memo->timeout_mechanism;
    frame.enforced = memo->enforced;
    return frame;
  }
  GroupFacts in_force;
  if (groups) {
    for (const proc::LimitApplied& a : groups->enforced()) {
      if (a.kind != proc::LimitKindCg::kCpu) in_force[static_cast<int>(a.kind)] = a;
    }
  }
  const Capabilities declared = declare(request.limits, in_force);
  frame.timeout_mechanism = declared.find(Aspect::kTimeout)->mechanism;
  frame.enforced = enforced_from(declared);
  if (memo != nullptr) {
    memo->limits = request.limits;
    memo->timeout_mechanism = frame.timeout_mechanism;
    memo->enforced = frame.enforced;
  }
  return frame;
}

Result<std::unique_ptr<BackendSession>> NamespaceBackend::open_session(
    const SessionOptions& options) {
  RunRequest base = options.base;
  base.limits.scratch_bytes = options.workspace_bytes;
  if (auto st = check_limits(base.limits, capabilities(base.limits), name()); !st) {
    return std::unexpected(st.error());
  }
  // The pool keeps still while the session opens and its first call runs (WarmPool::Busy):
  // its refill then comes after, not on their path.
  std::optional<SessionPool::Busy> busy;
  if (session_pool_ && session_pool_fits(base)) {
    busy.emplace(session_pool_.get());
    if (std::optional<std::unique_ptr<NamespaceSession>> taken = session_pool_->take()) {
      if ((*taken)->warm()) {
        (*taken)->adopt(std::move(base));
        pooled_sessions_.fetch_add(1);
        return std::unique_ptr<BackendSession>(std::move(*taken));
      }
      session_pool_->retire(std::move(*taken));  // it died while it waited
    }
  }
  SessionNetwork network;
  if (base.network.any()) {
    auto started = net::RunNetwork::start(base.network, options_.resolver_for_test);
    if (!started) return fail(started.error().code, "egress proxy: " + started.error().describe());
    network.proxy = std::move(*started);
  }
  auto made = make_session(std::move(base), std::move(network));
  if (!made) return std::unexpected(made.error());
  return std::unique_ptr<BackendSession>(std::move(*made));
}

Result<std::unique_ptr<NamespaceSession>> NamespaceBackend::make_session(RunRequest base,
                                                                         SessionNetwork network) {
  const auto until = Clock::now() + base.setup_bound;
  // The sandbox dies with the thread that clones it (PR_SET_PDEATHSIG): the session's own
  // keeper builds it, so it lives as long as the session, not as the thread that opened it
  // (the inspector's per-run workers end, as does a pool's thread), and still dies with cordon.
  auto keeper = std::make_unique<KeeperThread>();
  std::optional<Result<BuiltSandbox>> built;
  keeper->run([&] { built = build_session(base, until); });
  if (!*built) return std::unexpected(built->error());
  UniqueFd workspace = (*built)->process.take_tmp_fd();
  if (!workspace) return fail(ErrorCode::kInternal, "no workspace from the session's sandbox");
  auto session =
      std::make_unique<NamespaceSession>(*this, std::move(keeper), std::move(**built),
                                         std::move(workspace), std::move(network), std::move(base));
  // Its kernel now, not at the first call: the first call is then warm.
  if (auto st = session->start_kernel(until); !st) return std::unexpected(st.error());
  return session;
}

bool NamespaceBackend::session_pool_fits(const RunRequest& base) const {
  return starts_plain(base) && pool_fits(base, session_shape_);
}

Result<BuiltSandbox> NamespaceBackend::build_session(const RunRequest& shape,
                                                     Clock::time_point until) {
  discover();
  if (!probe_.available) return fail(ErrorCode::kUnavailable, probe_.reason);
  std::optional<SandboxPlan> plan;
  // The sandbox's /tmp, the calls' working directory: the workspace, reached from the host.
  return build(shape, /*want_tmp_fd=*/true, until, &plan);
}

Result<SandboxPlan> NamespaceBackend::session_call_plan(const RunRequest& call,
                                                        const BuiltSandbox& built) const {
  return plan_for(call, built.host, built.coverage, /*filesystem_made=*/true);
}

Result<SandboxPlan> NamespaceBackend::kernel_plan(const RunRequest& call,
                                                  const BuiltSandbox& session) const {
  RunRequest shape = call;
  shape.language = Language::kPython;
  shape.code.clear();
  auto plan = session_call_plan(shape, session);
  if (!plan) return fail(plan.error().code, "the session's python: " + plan.error().describe());
  return plan;
}

Result<SandboxKernel> NamespaceBackend::launch_kernel(BuiltSandbox& session, const RunRequest& call,
                                                      const net::RunNetwork* proxy) const {
  auto plan = kernel_plan(call, session);
  if (!plan) return std::unexpected(plan.error());
  auto launched = SandboxKernel::launch(session.process, std::move(*plan), proxy);
  if (!launched) {
    return fail(launched.error().code,
                "start the session's interpreter: " + launched.error().describe());
  }
  return launched;
}

Result<SandboxKernel> NamespaceBackend::start_kernel(BuiltSandbox& session, const RunRequest& call,
                                                     const net::RunNetwork* proxy,
                                                     Clock::time_point until) {
  auto kernel = launch_kernel(session, call, proxy);
  if (!kernel) return kernel;
  if (auto st = kernel->wait_ready(until); !st) return std::unexpected(st.error());
  return kernel;
}

RunResult NamespaceBackend::run_in_kernel(BuiltSandbox& session,
                                          std::optional<SandboxKernel>& kernel,
                                          SessionNetwork* network, const RunRequest& call,
                                          const CancelToken& cancel, RunObserver* observer) {
  discover();
  RunSetup setup(*this, call, observer, &probe_);
  if (setup.refused) return std::move(*setup.refused);
  // The session pool refills around calls, not during them.
  std::optional<SessionPool::Busy> busy;
  if (session_pool_) busy.emplace(session_pool_.get());
  const net::RunNetwork* proxy = network != nullptr ? network->proxy.get() : nullptr;
  if (auto refused =
          other_list_refusal(call.network, proxy != nullptr ? proxy->access() : NetworkAccess{})) {
    return setup.error(*refused);
  }
  const bool python = call.language == Language::kPython;
  // A python call runs in the kernel, planned when it started (its policy is the call's);
  // any other language starts a command, planned here.
  std::optional<SandboxPlan> command;
  if (!python) {
    auto plan = session_call_plan(call, session);
    if (!plan) return setup.error("plan: " + plan.error().describe());
    // The kernel starts the command itself: nothing can be written beside it first.
    if (!plan->files.empty()) {
      return setup.error("in a session, code of this language must fit in one argument (128 KiB)");
    }
    command = std::move(*plan);
  }
  if (kernel && kernel->client().lost()) kernel.reset();
  // A kernel started at the open, for the session's options: a first call that would start
  // it otherwise (its own variables, its CPU limit) gets one started as it asks, as when
  // the first call started the kernel.
  if (kernel && !kernel->used()) {
    auto wanted = kernel_plan(call, session);
    if (!wanted) return setup.error(wanted.error().describe());
    if (!same_start(*wanted, kernel->plan())) {
      kernel.reset();
      bool asked = false;
      if (auto ended = SandboxKernel::end(session.process, Clock::now(), setup.until, &asked);
          !ended) {
        return setup.error("end the interpreter started at the open: " + ended.error().describe());
      }
    }
  }
  if (!kernel) {
    auto launched = launch_kernel(session, call, proxy);
    if (!launched) return setup.error(launched.error().describe());
    kernel.emplace(std::move(*launched));
  }
  kernel->mark_used();
  KernelCall order;
  order.language = python ? "python" : std::string(to_string(call.language));
  order.code = call.code;
  if (command) order.argv = command->argv;
  order.stdin_data = call.stdin_data;

  const proc::LimitGroup* limits = session.limits ? &*session.limits : nullptr;
  SandboxKernel::CallMemo& memo = kernel->memo();
  proc::LimitGroupStats before;
  if (limits != nullptr) before = memo.stats ? *memo.stats : limits->stats();
  bool ended_by_host = false;
  StartedKernel started;
  started.client = &kernel->client();
  started.stdout_fd = kernel->stdout_fd();
  started.stderr_fd = kernel->stderr_fd();
  started.expects_sweep = true;
  started.end = [&](Clock::time_point kill_at, Clock::time_point until) -> std::optional<int> {
    auto report = SandboxKernel::end(session.process, kill_at, until, &ended_by_host);
    if (!report) return std::nullopt;
    return report->status;
  };
  std::optional<proc::LimitGroupStats> after;
  const KernelCallFacts facts = [&](Termination& t, RunResult& result) {
    after = session_call_limits(limits, before, t.signal == SIGKILL && !ended_by_host, t, result);
  };
  RunFrame frame =
      frame_for(setup, call, session.limits, command ? *command : kernel->plan(), &memo);
  if (proxy != nullptr) proxy->enforce_in(frame.enforced);
  setup.state.set(RunState::kRunning);
  RunResult result = run_kernel_call(started, order, call, cancel, setup.state.observer(), facts);
  setup.state.set(RunState::kStopping);
  if (result.state_lost) {
    kernel.reset();
  } else {
    memo.stats = after;
  }
  take_frame(std::move(frame), call, result);
  if (proxy != nullptr) proxy->report_call_into(result, &network->reported);
  result.setup_ms =
      std::max<std::int64_t>(0, ms_between(setup.started, Clock::now()) - result.wall_ms);
  return result;
}

Result<std::shared_ptr<SetupSpawner>> NamespaceBackend::spawner_for_build() const {
  using S = NamespaceOptions::Spawner;
  if (options_.setup_spawner == S::kNever ||
      (options_.setup_spawner == S::kWithPool && options_.pool_size == 0)) {
    return nullptr;
  }
  std::lock_guard lock(spawner_mutex_);
  if (spawner_ && spawner_->alive()) return spawner_;
  spawner_.reset();
  auto exe = find_ns_spawner();
  if (!exe) {
    if (options_.setup_spawner == S::kWithPool) return nullptr;
    return fail(ErrorCode::kUnavailable,
                "the cordon-ns-spawner helper was not found (set CORDON_LIBEXEC_DIR)");
  }
  auto started = SetupSpawner::start(*exe);
  if (!started) {
    if (options_.setup_spawner == S::kWithPool) return nullptr;
    return std::unexpected(started.error());
  }
  spawner_ = std::move(*started);
  return spawner_;
}

pid_t NamespaceBackend::spawner_pid() const {
  std::lock_guard lock(spawner_mutex_);
  return spawner_ ? spawner_->helper_pid() : -1;
}

WarmPool<BuiltSandbox>* NamespaceBackend::started_pool(Language language) const {
  if (language == Language::kPython) return python_pool_.get();
  if (language == Language::kSh) return sh_pool_.get();
  return nullptr;
}

Result<BuiltSandbox> NamespaceBackend::build_prestarted(Language language,
                                                        Clock::time_point until) const {
  const bool shell = language == Language::kSh;
  std::optional<SandboxPlan> plan;
  auto built = build(shell ? sh_shape_ : python_shape_, /*want_tmp_fd=*/true, until, &plan);
  if (!built) return built;
  // The run's own output pipes, made now: the interpreter sets up sys.stdout and
  // sys.stderr at its start from what fds 1 and 2 are, so they must be what the run's
  // are (pipes; stdin /dev/null, which is why runs with stdin data do not come here).
  auto out = proc::make_pipe();
  if (!out) return std::unexpected(out.error());
  auto err = proc::make_pipe();
  if (!err) return std::unexpected(err.error());
  CodeOrder order;
  order.plan = &*plan;
  order.stdout_fd = out->write.get();
  order.stderr_fd = err->write.get();
  // A shell starts with its library preloaded from fd 5, the last variable of its
  // environment (the library removes it; the plan kept for starts_as never had it).
  std::optional<SandboxPlan> with_preload;
  if (shell) {
    with_preload = *plan;
    with_preload->env.emplace_back(kShPreloadVariable);
    order.plan = &*with_preload;
    order.preload_fd = sh_preload_.get();
  }
  if (auto st = built->process.prestart(order, until); !st) return std::unexpected(st.error());
  built->prestarted =
      PrestartedInterpreter{std::move(*plan), std::move(out->read), std::move(err->read)};
  return built;
}

bool NamespaceBackend::prestart_fits(const RunRequest& request) const {
  // The cheap part of starts_as, so that a run that cannot use a prestarted interpreter
  // does not waste one.
  return started_pool(request.language) != nullptr && !request.stdin_data &&
         starts_plain(request) && pool_fits(request, pool_shape_);
}

bool starts_as(const SandboxPlan& run, const SandboxPlan& started) {
  // Python's start-up reads the user site directory (~/.local/lib/pythonX.Y/site-packages:
  // .pth files, usercustomize): input files there would have been seen by a fresh run.
  const std::string user_site = run.fs.home + "/.local/";
  return same_start(run, started) && run.argv.size() == 3 && started.argv.size() == 3 &&
         run.argv[0] == started.argv[0] && run.argv[1] == "-c" && started.argv[1] == "-c" &&
         std::ranges::none_of(run.files,
                              [&](const SandboxFile& f) { return f.path.starts_with(user_site); });
}

bool same_start(const SandboxPlan& run, const SandboxPlan& started) {
  const auto same_rlimit = [](const NamedRlimit& a, const NamedRlimit& b) {
    return a.setting.resource == b.setting.resource && a.setting.soft == b.setting.soft &&
           a.setting.hard == b.setting.hard;
  };
  return run.executable == started.executable && run.env == started.env && run.cwd == started.cwd &&
         std::ranges::equal(run.rlimits, started.rlimits, same_rlimit);
}

bool NamespaceBackend::pool_fits(const RunRequest& request, const RunRequest& shape) const {
  // The pooled sandboxes have the shape's ceilings and tmpfs size; other limits change
  // the limit groups or the /tmp mount, so such a run builds its own.
  const Limits want = with_default_ceilings(request.limits, options_);
  const Limits have = with_default_ceilings(shape.limits, options_);
  return want.memory_bytes == have.memory_bytes && want.max_processes == have.max_processes &&
         request.limits.scratch_bytes.value_or(kDefaultScratchBytes) ==
             shape.limits.scratch_bytes.value_or(kDefaultScratchBytes);
}

RunResult NamespaceBackend::run(const RunRequest& request, const CancelToken& cancel,
                                RunObserver* observer) {
  // 1. The request, and whether this host can do it at all (run_driver.h).
  discover();
  RunSetup setup(*this, request, observer, &probe_);
  if (setup.refused) return std::move(*setup.refused);
  // The pools refill around runs, not during them (WarmPool::Busy).
  std::optional<WarmPool<BuiltSandbox>::Busy> busy;
  std::optional<WarmPool<BuiltSandbox>::Busy> python_busy;
  std::optional<WarmPool<BuiltSandbox>::Busy> sh_busy;
  if (pool_) busy.emplace(pool_.get());
  if (python_pool_) python_busy.emplace(python_pool_.get());
  if (sh_pool_) sh_busy.emplace(sh_pool_.get());
  std::optional<SessionPool::Busy> session_busy;
  if (session_pool_) session_busy.emplace(session_pool_.get());

  // 2. A sandbox: one holding its interpreter started when the run starts exactly as it did
  //    (starts_as), else a pooled one when one is ready and has this run's shape (the init
  //    writes the input files), else one built for this run (its set-up process writes
  //    them). A pooled sandbox that died while it waited is dropped for a new one.
  std::optional<BuiltSandbox> sandbox;
  std::optional<SandboxPlan> plan;
  WarmPool<BuiltSandbox>* taken_from = nullptr;
  const auto files_under_cwd = [](const SandboxPlan& p) {
    // The code file (code too long for argv) goes outside /tmp, into the root the
    // pooled sandbox already made read-only: only a sandbox built for the run can.
    const std::string under = p.cwd + "/";
    return std::ranges::all_of(p.files,
                               [&](const SandboxFile& f) { return f.path.starts_with(under); });
  };
  const auto take_from = [&](WarmPool<BuiltSandbox>* from) -> Status {
    auto taken = from->take();
    if (!taken) return {};
    auto planned = plan_for(request, taken->host, taken->coverage, /*filesystem_made=*/true);
    if (!planned) return fail(planned.error().code, "plan: " + planned.error().describe());
    if (files_under_cwd(*planned) &&
        (!taken->prestarted || starts_as(*planned, taken->prestarted->plan))) {
      sandbox = std::move(*taken);
      plan = std::move(*planned);
      taken_from = from;
    } else {
      from->retire(std::move(*taken));
    }
    return {};
  };
  if (prestart_fits(request)) {
    if (auto st = take_from(started_pool(request.language)); !st) {
      return setup.error(st.error().describe());
    }
  }
  if (!sandbox && pool_ && pool_fits(request, pool_shape_)) {
    if (auto st = take_from(pool_.get()); !st) return setup.error(st.error().describe());
  }
  // The run's network allow-list: its proxy, up before the code can ask it anything, and
  // ended (with what went through) after the code is gone.
  std::unique_ptr<net::RunNetwork> network;
  if (request.network.any()) {
    auto started = net::RunNetwork::start(request.network, options_.resolver_for_test);
    if (!started) return setup.error("egress proxy: " + started.error().describe());
    network = std::move(*started);
  }
  std::optional<RunPipes> pipes;
  for (;;) {
    if (!sandbox) {
      auto built = build(request, !request.artifact_globs.empty(), setup.until, &plan);
      if (!built) return setup.error(built.error().describe());
      sandbox = std::move(*built);
    }
    if (cancel.cancelled()) return setup.cancelled();

    // 3. Pipes (the parent ends stay CLOEXEC); a prestarted interpreter's are the ones it
    //    was started with, a plain pooled sandbox's were made with it.
    const bool prestarted = sandbox->prestarted.has_value();
    if (prestarted) {
      pipes = RunPipes{proc::Pipe{std::move(sandbox->prestarted->stdout_read), {}},
                       proc::Pipe{std::move(sandbox->prestarted->stderr_read), {}}, std::nullopt};
    } else if (sandbox->pipes && !request.stdin_data) {
      pipes = std::move(*sandbox->pipes);
      sandbox->pipes.reset();
    } else {
      auto made = make_run_pipes(request);
      if (!made) return setup.error("pipe: " + made.error().describe());
      pipes = std::move(*made);
    }

    // 4. The code: the init starts it (already under no_new_privs and the filter), or
    //    hands it to the interpreter it started; a failure to start shows when the init
    //    ends (SandboxTree::describe_end).
    CodeOrder order;
    order.plan = &*plan;
    order.write_files = taken_from != nullptr;
    order.prestarted = prestarted;
    order.stdin_fd = pipes->child_stdin() >= 0 ? pipes->child_stdin() : dev_null_.get();
    order.stdout_fd = pipes->child_stdout();
    order.stderr_fd = pipes->child_stderr();
    if (network) {
      order.relay_port = net::RunNetwork::port();
      order.relay_dir_fd = network->dir_fd();
      order.relay_socket = net::RunNetwork::socket_name();
    }
    auto launched = sandbox->process.launch(order);
    if (!launched && taken_from != nullptr && launched.error().code == ErrorCode::kUnavailable) {
      taken_from->retire(std::move(*sandbox));
      sandbox.reset();
      taken_from = nullptr;
      continue;
    }
    if (!launched) return setup.error(launched.error().describe());
    if (prestarted) prestarted_runs_.fetch_add(1);
    break;
  }

  // What this run enforces: the declaration for the groups its sandbox really has.
  RunFrame frame = frame_for(setup, request, sandbox->limits, *plan);

  // 5. The shared driver (run_driver.h) runs it to the end: pump output until the init
  //    exits (right after the main process), the deadline or cancel; kill the namespace
  //    whatever ended the pump (a no-op when init already exited); reap it (which waits
  //    for every process of the namespace); the outcome; artifacts from the sandbox's
  //    /tmp; the limit groups removed. The uid slot is held until the end of this scope.
  UidSlot slot = std::move(sandbox->slot);
  SandboxTree tree(std::move(sandbox->limits), std::move(sandbox->process));
  // With a pool, the run ends on the init's report that nothing of the code is left; the
  // init then waits, and the pool's thread ends it (the namespaces' teardown) and removes
  // the groups once the result is out (WarmPool::Busy says when); a sandbox built for this
  // run goes the same way. The uid slot stays held until the init is gone.
  if (WarmPool<BuiltSandbox>* retire_to = taken_from != nullptr ? taken_from : pool_.get();
      retire_to != nullptr) {
    tree.retire_with(
        [retire_to, &slot](SandboxProcess used, std::optional<proc::LimitGroup> groups) {
          BuiltSandbox retired;
          retired.slot = std::move(slot);
          retired.limits = std::move(groups);
          retired.process = std::move(used);
          retire_to->retire(std::move(retired));
        });
  }
  if (network) network->enforce_in(frame.enforced);
  RunResult result =
      drive_run(request, cancel, setup.state, tree, std::move(*pipes), std::move(frame));
  if (network) network->finish_into(result);
  return result;
}

}  // namespace cordon::ns
