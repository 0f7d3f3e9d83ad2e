#include "subprocess_backend.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "contained_tree.h"
#include "cordon/claims.h"
#include "cordon/interpreter.h"
#include "cordon/limit_check.h"
#include "cordon/owner.h"
#include "cordon/proc/cgroup2.h"
#include "cordon/proc/cgroup_delegation.h"
#include "cordon/proc/reaper.h"
#include "cordon/run_driver.h"
#include "cordon/scope_exit.h"
#include "cordon/temp_dir.h"
#include "cordon/units.h"
#include "cordon/workspace.h"

namespace cordon::subprocess {
namespace fs = std::filesystem;
namespace {

// Lowers a limit only: without CAP_SYS_RESOURCE (root here lacks it) a value above the
// current hard limit would make setrlimit fail in the child.
rlim_t clamp_to_hard(int resource, rlim_t wanted) {
  struct rlimit cur{};
  if (::getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
    return std::min(wanted, cur.rlim_max);
  }
  return wanted;
}

// The rlimits a request asks for, as they will be applied: the settings, and the values
// the backend's declaration claims for them.
struct RlimitPlan {
  std::vector<proc::RlimitSetting> settings;
  std::optional<rlim_t> memory;     // RLIMIT_AS, bytes
  std::optional<rlim_t> cpu_secs;   // RLIMIT_CPU soft limit
  std::optional<rlim_t> processes;  // RLIMIT_NPROC
};

RlimitPlan plan_rlimits(const Limits& limits) {
  RlimitPlan plan;
  if (limits.memory_bytes) {
    const rlim_t v = clamp_to_hard(RLIMIT_AS, *limits.memory_bytes);
    plan.settings.push_back({RLIMIT_AS, v, v});
    plan.memory = v;
  }
  if (limits.cpu_time) {
    // Whole seconds, rounded up; SIGXCPU at the soft limit, SIGKILL a second later.
    const auto secs = static_cast<rlim_t>((limits.cpu_time->count() + 999) / 1000);
    const rlim_t soft = clamp_to_hard(RLIMIT_CPU, std::max<rlim_t>(secs, 1));
    const rlim_t hard = clamp_to_hard(RLIMIT_CPU, soft + 1);
    plan.settings.push_back({RLIMIT_CPU, soft, hard});
    plan.cpu_secs = soft;
  }
  // RLIMIT_NPROC counts every process of the uid, and root ignores it: applied only for
  // other users, and then only partially meaningful (see declare()).
  if (limits.max_processes && ::geteuid() != 0) {
    const rlim_t v = clamp_to_hard(RLIMIT_NPROC, *limits.max_processes);
    plan.settings.push_back({RLIMIT_NPROC, v, v});
    plan.processes = v;
  }
  return plan;
}

Mechanism rlimit(std::string resource, std::string per) {
  return {"rlimit", {{"resource", std::move(resource)}, {"per", std::move(per)}}};
}

// The one declaration of what a run with `limits` enforces, its process tree contained
// by a cgroup of its own (`cgroup`) or by the helper: capabilities() and every run's
// `enforced` are rendered from it.
Capabilities declare(const Limits& limits, bool cgroup) {
  const RlimitPlan plan = plan_rlimits(limits);
  // RLIMIT_AS: python3 needs kMinAddressSpaceBytes to start; RLIMIT_CPU in seconds.
  const LimitRange memory_range = rlimit_range(RLIMIT_AS, kMinAddressSpaceBytes, kCgroupMemoryMax);
  const LimitRange cpu_range = rlimit_cpu_range();
  using Unit = Quantity::Unit;
  Capabilities caps;
  caps.aspects = {
      no_claim(Aspect::kNetwork, "the code has the host's full network access"),
      no_claim(Aspect::kFilesystem,
               "runs in a fresh temp dir, but can read and write every host file the user "
               "running cordon can"),
      no_claim(Aspect::kEnvironment,
               "a clean environment is passed (PATH, HOME in a temp dir, LANG), but host files "
               "such as ~/.aws/credentials and ~/.ssh, and other processes' environments, are "
               "readable"),
      no_claim(Aspect::kProcessTree,
               "the code sees and can signal every process of the user, cordon itself included"),
      no_claim(Aspect::kSyscallFilter, "no seccomp filter"),
      plan.memory ? claim(Aspect::kMemory, Enforcement::kPartial, rlimit("RLIMIT_AS", "process"),
                          Quantity{Unit::kBytes, *plan.memory, ""},
                          "address space per process, not the whole tree's memory", memory_range)
                  : no_claim(Aspect::kMemory,
                             "not limited unless a memory limit is asked for (then RLIMIT_AS per "
                             "process)",
                             memory_range),
      plan.processes
          ? claim(Aspect::kProcesses, Enforcement::kPartial, rlimit("RLIMIT_NPROC", "uid"),
                  Quantity{Unit::kCount, *plan.processes, ""},
                  "RLIMIT_NPROC counts every process of the uid, not only the run's",
                  rlimit_range(RLIMIT_NPROC, 1, kPidsMaxLimit))
      : limits.max_processes
          ? no_claim(Aspect::kProcesses,
                     "RLIMIT_NPROC does not apply to root; the process count is not limited")
          : no_claim(Aspect::kProcesses, "the process count is not limited"),
      plan.cpu_secs
          ? claim(Aspect::kCpu, Enforcement::kPartial, rlimit("RLIMIT_CPU", "process"),
                  Quantity{Unit::kMilliseconds, *plan.cpu_secs * 1000, ""},
                  "CPU time per process, not the whole tree's", cpu_range)
          : no_claim(Aspect::kCpu, "CPU time is bounded only by the wall-clock timeout", cpu_range),
      no_claim(Aspect::kDisk, "writes are limited only by the host's free space"),
      output_claim(effective_output_cap(limits)),
      claim(Aspect::kTimeout, Enforcement::kEnforced,
            {"deadline", {{"kill", cgroup ? "cgroup.kill" : "subreaper_helper"}}}, std::nullopt,
            "the whole process tree is killed at the deadline, including descendants that "
            "called setsid or daemonised, and after the main process exits")};
  return caps;
}

std::vector<std::string> make_env(const RunRequest& request, const fs::path& home) {
  std::vector<std::string> env = {std::string("PATH=") + kSandboxPath, "HOME=" + home.string()};
  const bool has_lang = std::any_of(request.env.begin(), request.env.end(),
                                    [](const auto& kv) { return kv.first == "LANG"; });
  if (!has_lang) env.emplace_back("LANG=C.UTF-8");
  for (const auto& [name, value] : request.env) env.push_back(name + "=" + value);
  return env;
}

// Run dirs are "cordon-run-<pid>-XXXXXX" so a later start can sweep a dead cordon's.
constexpr std::string_view kRunDirPrefix = "cordon-run-";

}  // namespace

SubprocessBackend::SubprocessBackend(SubprocessOptions options) : options_(options) {}

const SubprocessBackend::HostFacts& SubprocessBackend::facts() const {
  std::call_once(facts_once_, [this] {
    // A cgroup only where runs can make one with cgroup.kill: otherwise each run would
    // fall back to the helper while capabilities() claimed cgroup.kill.
    if (auto dir = proc::own_cgroup2_dir();
        dir && ::access(dir->c_str(), W_OK) == 0 && proc::cgroup_kill_expected(*dir)) {
      facts_.cgroup_parent = *dir;
    }
    // The parent is chosen once: it costs a statfs and an access() per run otherwise.
    facts_.run_parent = default_run_parent();
    facts_.helper = proc::find_reaper_helper();
  });
  return facts_;
}

Result<void> SubprocessBackend::prepare() {
  return prepared_([this]() -> Result<void> {
    // Cgroups left by a cordon that died (its pid gone): kill what runs in them, remove.
    if (facts().cgroup_parent) (void)proc::sweep_stale_cgroups(*facts().cgroup_parent);
    // Temp dirs left by a cordon that was SIGKILLed mid-run (named with its pid).
    (void)sweep_stale_temp_dirs(kRunDirPrefix, facts().run_parent);
    return {};
  });
}

std::optional<proc::Cgroup2> SubprocessBackend::take_idle_cgroup() {
  const std::lock_guard lock(idle_mu_);
  while (!idle_cgroups_.empty()) {
    proc::Cgroup2 cg = std::move(idle_cgroups_.back());
    idle_cgroups_.pop_back();
    // A kept group is empty, so any rmdir removes it (another cordon's sweep, a runtime's
    // cleanup, an admin), and clone3(CLONE_INTO_CGROUP) into it then fails with ENOENT
    // (issue #11 item 15). Looked up through its own directory fd: a removed cgroup's
    // directory has no entries left, and a new one of the same name is not ours.
    if (::faccessat(cg.dir_fd(), "cgroup.procs", F_OK, 0) == 0) return cg;
  }
  return std::nullopt;
}

void SubprocessBackend::give_back_cgroup(proc::Cgroup2 cgroup) {
  const std::lock_guard lock(idle_mu_);
  if (idle_cgroups_.size() < kMaxIdleCgroups) idle_cgroups_.push_back(std::move(cgroup));
  // else: dropped here, and its destructor removes it.
}

bool SubprocessBackend::uses_cgroup() const {
  return !options_.force_fallback && facts().cgroup_parent.has_value() && !cgroup_refused_.load();
}

Probe SubprocessBackend::probe() const {
  if (options_.environment_asked) {
    return {false,
            "it runs the host's own files: it cannot run in an environment "
            "(--environment/--rootfs need namespace or container)"};
  }
  if (!uses_cgroup() && !facts().helper) {
    return {false,
            "cannot kill a whole process tree here: no writable cgroup v2 directory of our own "
            "and the cordon-init helper was not found (set CORDON_LIBEXEC_DIR)"};
  }
  return {true,
          "runs the code as a plain child process: it isolates nothing (the code can read "
          "host files, use the network and see other processes); only the timeout and the "
          "output cap are enforced, plus rlimits when asked for"};
}

Capabilities SubprocessBackend::capabilities(const Limits& limits) const {
  return declare(limits, uses_cgroup());
}

RunResult SubprocessBackend::run(const RunRequest& request, const CancelToken& cancel,
                                 RunObserver* observer) {
  // 1. Check the request (run_driver.h).
  RunSetup setup(*this, request, observer);
  if (setup.refused) return std::move(*setup.refused);
  const HostFacts& host = facts();

  // 2. A private temp dir: work/ is the cwd, home/ is HOME, the code file (when too big
  //    for argv) goes beside them so the code's own listing of work/ does not show it.
  auto tmp = TempDir::create(owned_prefix(kRunDirPrefix), host.run_parent);
  if (!tmp) return setup.error("create temp dir: " + tmp.error().describe());
  const fs::path work = tmp->path() / "work";
  const fs::path home = tmp->path() / "home";
  if (::mkdir(work.c_str(), 0700) != 0 || ::mkdir(home.c_str(), 0700) != 0) {
    return setup.error("mkdir in " + tmp->path().string() + ": " + std::strerror(errno));
  }
  if (auto st = place_input_files(work, request.input_files); !st) {
    return setup.error("place input files: " + st.error().describe());
  }

  // 3. The interpreter from the fixed system PATH, never the caller's.
  auto interp = find_interpreter(request.language);
  if (!interp) return setup.error(interp.error().describe());
  bool needs_file = false;
  const fs::path code_file = tmp->path() / "code";
  proc::SpawnOptions code;
  code.argv = interpreter_argv(request.language, *interp, request.code, code_file, &needs_file);
  if (needs_file) {
    if (auto st = write_new_file(code_file, request.code, 0644); !st)
      return setup.error(st.error().describe());
  }
  code.path = interp->string();
  code.env = make_env(request, home);
  code.cwd = work.string();
  code.rlimits = plan_rlimits(request.limits).settings;

  // 4. Pipes. Parent ends stay CLOEXEC; spawn() places the child ends at 0/1/2.
  auto pipes = make_run_pipes(request);
  if (!pipes) return setup.error("pipe: " + pipes.error().describe());
  code.stdin_fd = pipes->child_stdin();
  code.stdout_fd = pipes->child_stdout();
  code.stderr_fd = pipes->child_stderr();

  // 5. Containment: a cgroup of our own if we can make one, else the helper.
  std::optional<proc::Cgroup2> cgroup;
  if (uses_cgroup()) {
    cgroup = take_idle_cgroup();
    if (!cgroup) {
      // No controller is needed here (cgroup.kill, cpu.stat), so nothing is delegated for it,
      // but once another backend of this process has a delegated parent (on a pure v2
      // host), every run group of cordon goes there.
      const auto acquired = proc::acquired_v2_parent();
      if (auto cg = proc::Cgroup2::create(acquired ? acquired->dir : *host.cgroup_parent)) {
        cgroup = std::move(*cg);
      } else {
        // Refused where a cgroup was expected: this run and the claims from now on say
        // the helper, which is what contains the runs (never a claim of cgroup.kill).
        cgroup_refused_ = true;
      }
    }
  }
  if (!cgroup && !host.helper) {
    return setup.error("cannot contain the process tree: no cgroup and no cordon-init helper");
  }
  if (Clock::now() > setup.until) return setup.error("set-up exceeded its bound");
  if (cancel.cancelled()) return setup.cancelled();

  // 6. Start the code, then the shared driver runs it to the end (run_driver.h).
  auto tree = ContainedTree::start(std::move(code), std::move(cgroup), host.helper.value_or(""),
                                   setup.until);
  if (!tree) return setup.error(tree.error().describe());
  // What this run enforces, rendered from the declaration for how its tree is contained.
  const Capabilities declared = declare(request.limits, tree->in_cgroup());
  RunFrame frame = setup.frame();
  frame.timeout_mechanism = declared.find(Aspect::kTimeout)->mechanism;
  frame.enforced = enforced_from(declared);
  SubprocessTree started(std::move(*tree), std::move(*tmp), work,
                         [this](proc::Cgroup2 cg) { give_back_cgroup(std::move(cg)); });
  return drive_run(request, cancel, setup.state, started, std::move(*pipes), std::move(frame));
}

}  // namespace cordon::subprocess
