// make_sandbox_plan: request + options -> plain data, no syscalls beyond reading the
// interpreter's location on the host (which the sandbox sees at the same path).
#include "sandbox_plan.h"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <set>

#include "cordon/interpreter.h"
#include "cordon/net/run_network.h"

namespace cordon::ns {
namespace {

rlim_t clamp(rlim_t wanted, const std::optional<rlim_t>& hard) {
  if (hard && *hard != RLIM_INFINITY) return std::min(wanted, *hard);
  return wanted;
}

// Directories to create (mkdir -p) for a file at `path` below `root`, outermost first.
void add_parent_dirs(const std::string& path, const std::string& root, std::set<std::string>& made,
                     std::vector<policy::FsStep>& steps) {
  for (std::size_t slash = path.find('/', root.size() + 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (made.insert(dir).second) {
      steps.push_back({.op = policy::FsOp::kMkdir, .target = dir, .mode = 0755});
    }
  }
}

}  // namespace

Limits with_default_ceilings(const Limits& requested, const NamespaceOptions& options) {
  Limits out = requested;
  if (!out.memory_bytes) out.memory_bytes = options.default_memory_bytes;
  if (!out.max_processes) out.max_processes = options.default_max_processes;
  return out;
}

std::string map_line(const IdMapping& m) {
  return std::to_string(m.inside) + " " + std::to_string(m.outside) + " " +
         std::to_string(m.count) + "\n";
}

Result<SandboxPlan> make_sandbox_plan(const PlanInputs& in) {
  if (in.request == nullptr) return fail(ErrorCode::kInvalidArgument, "no request");
  const RunRequest& req = *in.request;
  if (auto st = validate(req); !st) return std::unexpected(st.error());
  if (in.options.default_memory_bytes == 0 || in.options.default_max_processes == 0) {
    return fail(ErrorCode::kInvalidArgument, "default memory and process ceilings must be above 0");
  }

  SandboxPlan plan;
  // Every namespace but time: the code gets its own view of users, processes, network,
  // mounts, SysV IPC, hostname and cgroup paths.
  plan.clone_flags =
      CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  plan.namespaces = {"user", "pid", "mount", "ipc", "uts", "cgroup"};
  if (in.options.network_namespace) {
    plan.clone_flags |= CLONE_NEWNET;
    plan.namespaces.emplace_back("network");
  }
  plan.loopback_up = in.options.network_namespace;

  // One id inside, the sandbox user, mapped to one host id: for root a uid of its own per
  // run (uid slots), for an ordinary user that user's own id (the only one it may map).
  // Nothing else is mapped, so host root's files show as the overflow id 65534 and no
  // process inside can ever hold a host id other than this one.
  plan.uid_map = {kSandboxUid, in.host.uid, 1};
  plan.gid_map = {kSandboxGid, in.host.gid, 1};
  // An unprivileged writer must write "deny" to setgroups before gid_map, and then the
  // child keeps the caller's supplementary groups (shown as 65534). Root may allow
  // setgroups and the child drops every supplementary group.
  plan.deny_setgroups = !in.host.root;
  plan.clear_groups = in.host.root;

  policy::FsOptions fo;
  const bool environment = !in.options.system_root.empty();
  fo.system_root = environment ? in.options.system_root : "/";
  fo.hide_usr_local = in.options.hide_usr_local && !environment;
  fo.layout = in.layout;
  fo.uid = kSandboxUid;
  fo.gid = kSandboxGid;
  const std::uint64_t scratch = req.limits.scratch_bytes.value_or(kDefaultScratchBytes);
  fo.tmp_size_bytes = scratch;
  for (const std::string& p : in.options.extra_ro_paths) {
    auto extra = policy::describe_extra_path(p);
    if (!extra) return std::unexpected(extra.error());
    fo.extra_ro_paths.push_back(*extra);
  }
  if (in.filesystem_made) {
    plan.fs = policy::fs_plan_facts(fo);
  } else {
    auto fs = policy::make_fs_plan(fo);
    if (!fs) return std::unexpected(fs.error());
    plan.fs = std::move(*fs);
  }
  if (!in.options.readonly_proc_sys) {
    std::erase_if(plan.fs.steps, [](const policy::FsStep& step) {
      return step.op == policy::FsOp::kReadonly && step.target == "/proc/sys";
    });
  }
  plan.cwd = plan.fs.cwd;

  // The interpreter as the sandbox sees it: /usr/local is hidden, so look only where the
  // sandbox can find it (the host's /usr, and /bin as the host lays it out).
  const std::string path_var =
      fo.hide_usr_local && in.layout.has_usr_local ? "/usr/bin:/bin" : kSandboxPath;
  auto interp = in.find_interpreter ? in.find_interpreter(req.language, path_var, fo.system_root)
                                    : find_interpreter(req.language, path_var, fo.system_root);
  if (!interp) return std::unexpected(interp.error());
  plan.executable = interp->string();
  bool needs_file = false;
  plan.argv = interpreter_argv(req.language, *interp, req.code, kCodeFile, &needs_file);
  if (needs_file) plan.files.push_back({kCodeFile, req.code, 0444});

  // Input files under the working directory (paths checked by validate()).
  std::set<std::string> made{plan.cwd};
  std::vector<policy::FsStep> dirs;
  for (const auto& [rel, bytes] : req.input_files) {
    const std::string abs = plan.cwd + "/" + rel;
    add_parent_dirs(abs, plan.cwd, made, dirs);
    plan.files.push_back({abs, bytes, 0644});
  }
  // Parent directories first.
  std::vector<SandboxFile> ordered;
  ordered.reserve(dirs.size() + plan.files.size());
  for (const auto& d : dirs) ordered.push_back({d.target, {}, 0755, true});
  for (auto& f : plan.files) ordered.push_back(std::move(f));
  plan.files = std::move(ordered);

  // A clean environment from the request only: nothing of the caller's.
  plan.env = {"PATH=" + path_var, "HOME=" + plan.fs.home};
  const bool has_lang = std::any_of(req.env.begin(), req.env.end(),
                                    [](const auto& kv) { return kv.first == "LANG"; });
  if (!has_lang) plan.env.emplace_back("LANG=C.UTF-8");
  for (const auto& [name, value] : req.env) plan.env.push_back(name + "=" + value);
  // With an allow-list, the way out: the relay on the sandbox's loopback (validate() keeps
  // the request from setting these itself).
  if (req.network.any()) {
    for (const auto& [name, value] : net::proxy_environment(req.network)) {
      plan.env.push_back(name + "=" + value);
    }
  }

  // Always: no core dumps (the kernel's core handler runs outside the sandbox), a bounded
  // fd table, and a file-size bound just above /tmp's size, so a full /tmp reports ENOSPC
  // rather than SIGXFSZ while a file elsewhere (/dev/shm) still cannot grow past it.
  const rlim_t nofile = clamp(kSandboxNofile, in.nofile_hard);
  const rlim_t fsize = scratch + (1ULL << 20);
  plan.rlimits.push_back({{RLIMIT_CORE, 0, 0}, "RLIMIT_CORE"});
  plan.rlimits.push_back({{RLIMIT_NOFILE, nofile, nofile}, "RLIMIT_NOFILE"});
  plan.rlimits.push_back({{RLIMIT_FSIZE, fsize, fsize}, "RLIMIT_FSIZE"});
  // Fallbacks for limits no cgroup could take (default ceilings included); the backend's
  // declaration (NamespaceBackend::declare) names them.
  const Limits lim = with_default_ceilings(req.limits, in.options);
  if (lim.memory_bytes && !in.cgroups.memory) {
    const rlim_t v = *lim.memory_bytes;
    plan.rlimits.push_back({{RLIMIT_AS, v, v}, "RLIMIT_AS"});
  }
  if (lim.max_processes && !in.cgroups.processes) {
    // Counted per uid in the user namespace; +1 for the namespace's init. As root the uid
    // is this run's alone, so it counts exactly the sandbox's processes.
    const rlim_t v = *lim.max_processes + 1;
    plan.rlimits.push_back({{RLIMIT_NPROC, v, v}, "RLIMIT_NPROC"});
  }
  if (lim.cpu_time && !in.cgroups.cpu) {
    const auto secs =
        static_cast<rlim_t>(std::max<std::int64_t>((lim.cpu_time->count() + 999) / 1000, 1));
    plan.rlimits.push_back({{RLIMIT_CPU, secs, secs + 1}, "RLIMIT_CPU"});
  }

  plan.drop_capabilities = in.options.drop_capabilities;
  plan.seccomp = in.options.seccomp;
  plan.policy_name = in.policy_name;
  plan.policy_version = in.policy_version;
  plan.policy_hash = in.policy_hash;
  return plan;
}

Plan to_plan(const SandboxPlan& plan) {
  using nlohmann::json;
  Plan out;
  out.namespaces = plan.namespaces;
  out.uid_map = map_line(plan.uid_map);
  out.hostname = plan.fs.hostname;
  out.user = PlanUser{.uid = plan.fs.uid, .gid = plan.fs.gid};
  out.filesystem.emplace(policy::plan_filesystem(plan.fs));
  out.cwd = plan.cwd;
  out.argv = plan.argv;
  for (const auto& r : plan.rlimits) {
    out.rlimits.push_back({.resource = r.name, .soft = r.setting.soft, .hard = r.setting.hard});
  }
  out.network = plan.loopback_up ? "loopback only (lo up, no route out)" : "host network";
  out.linux_capabilities = plan.drop_capabilities
                               ? "all dropped (effective, permitted, inheritable, bounding, "
                                 "ambient); no_new_privs"
                               : "kept (test only)";
  if (plan.seccomp) {
    out.seccomp = PlanSeccomp{.policy = plan.policy_name,
                              .version = plan.policy_version,
                              .hash = plan.policy_hash,
                              .rules = std::nullopt};
  }
  // What only this backend's plan says.
  json files = json::array();
  for (const auto& f : plan.files) {
    files.push_back(
        {{"path", f.path}, {"bytes", f.data.size()}, {"kind", f.directory ? "dir" : "file"}});
  }
  out.extra = {{"gid_map", map_line(plan.gid_map)},
               {"setgroups", plan.deny_setgroups ? "deny" : "allow (cleared in the child)"},
               {"files", std::move(files)},
               {"executable", plan.executable},
               {"env", plan.env}};
  return out;
}

}  // namespace cordon::ns
