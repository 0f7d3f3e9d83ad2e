// run_in_engine: one `podman run` per request, judged and removed afterwards.
#include "engine_run.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <sstream>

#include "container_cgroups.h"
#include "cordon/interpreter.h"
#include "cordon/proc/output_pump.h"
#include "cordon/proc/pipe.h"
#include "cordon/units.h"
#include "run_common.h"

namespace cordon::oci {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kDrainBound{1000};
constexpr milliseconds kEngineCallBound{20000};  // podman's own calls can take seconds

// Within the current hard limit: root here cannot raise one (no CAP_SYS_RESOURCE).
std::string ulimit(int resource, rlim_t wanted) {
  struct rlimit r{};
  if (::getrlimit(resource, &r) == 0 && r.rlim_max != RLIM_INFINITY && r.rlim_max < wanted) {
    wanted = r.rlim_max;
  }
  return std::to_string(wanted) + ":" + std::to_string(wanted);
}

}  // namespace

Result<std::vector<std::string>> engine_run_argv(const EngineSettings& s,
                                                 const ContainerOptions& options,
                                                 const RunRequest& request,
                                                 const std::string& name) {
  if (auto st = validate(request); !st) return std::unexpected(st.error());
  if (!request.input_files.empty() || !request.artifact_globs.empty()) {
    return fail(ErrorCode::kUnavailable,
                "engine mode takes no input files or artifacts (use the OCI runtime mode)");
  }
  if (s.image.empty()) return fail(ErrorCode::kInvalidArgument, "engine mode needs an image");
  // The interpreter's path inside the image is taken from the host's layout: images made
  // from the host's files (as the tests do) or a distribution image keep /usr/bin.
  bool needs_file = false;
  const std::string interp =
      std::string("/usr/bin/") + std::string(interpreter_name(request.language));
  std::vector<std::string> code_argv =
      interpreter_argv(interp, request.code, kCodeFile, &needs_file);
  if (needs_file) {
    return fail(ErrorCode::kUnavailable, "code too long for argv is not supported in engine mode");
  }
  const BundleKey key = bundle_key(request.limits, options);
  std::vector<std::string> a = {
      s.engine.string(), "run",
      "--name",          name,
      "--runtime",       "runc",
      "--network",       options.network_namespace ? "none" : "host",
      "--memory",        std::to_string(key.memory_bytes + (1U << 20)),
      "--memory-swap",   std::to_string(key.memory_bytes + (1U << 20)),
      "--pids-limit",    std::to_string(key.max_processes + 1),
      "--read-only",     "--read-only-tmpfs=false",
      "--tmpfs",         "/tmp:size=" + std::to_string(key.scratch_bytes) + ",mode=1777",
      "--workdir",       "/tmp",
      "--security-opt",  "no-new-privileges",
      "--cap-drop",      "ALL",
      "--user",          "65534:65534",
      "--ulimit",        "nofile=" + ulimit(RLIMIT_NOFILE, kSandboxNofile),
      "--ulimit",        "nproc=" + ulimit(RLIMIT_NPROC, kSandboxNofile),
      "--ulimit",        "core=0:0",
      "--log-driver",    "none",
      "--env",           "PATH=/usr/bin:/bin",
      "--env",           "HOME=/tmp"};
  if (options.cpus > 0) {
    std::ostringstream cpus;
    cpus << options.cpus;
    a.insert(a.end(), {"--cpus", cpus.str()});
  }
  if (!s.seccomp_file.empty()) a.insert(a.end(), {"--security-opt", "seccomp=" + s.seccomp_file});
  if (!s.memory_own.empty()) {
    a.insert(a.end(), {"--cgroups", "no-conmon", "--cgroup-parent", s.memory_own + "/" + name});
  }
  bool has_lang = false;
  for (const auto& [k, v] : request.env) {
    has_lang = has_lang || k == "LANG";
    a.insert(a.end(), {"--env", k + "=" + v});
  }
  if (!has_lang) a.insert(a.end(), {"--env", "LANG=C.UTF-8"});
  if (request.stdin_data) a.emplace_back("--interactive");
  a.push_back(s.image);
  a.insert(a.end(), code_argv.begin(), code_argv.end());
  return a;
}

// The engine leaves the parent folders it made for --cgroup-parent in the hierarchies
// where cordon's own cgroup is the root: remove them when empty, innermost first; then
// cordon's own groups.
void remove_engine_cgroups(const EngineSettings& s, const std::string& name) {
  if (s.memory_own.empty()) return;
  const std::filesystem::path rel =
      std::filesystem::path(s.memory_own + "/" + name).relative_path();
  for (const auto& h : s.hierarchies) {
    if (h.own_dir.string().ends_with(s.memory_own)) continue;
    for (auto dir = h.own_dir / rel; dir != h.own_dir && dir.has_relative_path();
         dir = dir.parent_path()) {
      if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) break;  // in use: another run's
    }
  }
  remove_container_cgroups(s.hierarchies, name);
}

RunResult run_in_engine(const EngineSettings& s, const ContainerOptions& options,
                        const RunRequest& request, const std::string& name,
                        const CancelToken& cancel, RunObserver* observer) {
  const BackendId id{"container", "0.1.0"};
  const auto t_setup = Clock::now();
  auto error = [&](std::string why) { return sandbox_error(id, std::move(why)); };
  auto argv = engine_run_argv(s, options, request, name);
  if (!argv) return error(argv.error().describe());
  const milliseconds timeout = effective_timeout(request);
  const std::uint64_t cap_bytes = effective_output_cap(request.limits);
  const BundleKey key = bundle_key(request.limits, options);
  const std::string engine = s.engine.string();
  // Whatever happens, the container goes (rm -f kills it first if it runs).
  struct Remover {
    const EngineSettings& s;
    std::string name;
    ~Remover() {
      (void)run_tool({s.engine.string(), "rm", "--force", "--time", "0", name},
                     Clock::now() + kEngineCallBound);
      remove_engine_cgroups(s, name);
    }
  } remover{s, name};
  std::optional<ContainerCgroups> cgroups;
  if (!s.memory_own.empty()) {
    auto made = ContainerCgroups::create(s.hierarchies, name, key.memory_bytes, key.max_processes);
    if (!made) return error("cgroups: " + made.error().describe());
    cgroups = std::move(*made);
  }

  auto out = proc::make_pipe();
  auto err = proc::make_pipe();
  auto in = proc::make_pipe();
  if (!out || !err || !in) return error("cannot make the stdio pipes");
  proc::SpawnOptions so;
  so.path = engine;
  so.argv = *argv;
  so.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  so.stdin_fd = request.stdin_data ? in->read.get() : -1;
  so.stdout_fd = out->write.get();
  so.stderr_fd = err->write.get();
  auto child = proc::spawn(so);
  if (!child) return error("start " + engine + ": " + child.error().describe());
  out->write.reset();
  err->write.reset();
  in->read.reset();
  const auto t_start = Clock::now();
  proc::OutputPump pump(std::move(out->read), std::move(err->read),
                        request.stdin_data ? std::move(in->write) : UniqueFd(),
                        request.stdin_data ? std::string_view(*request.stdin_data) : "", cap_bytes,
                        observer);
  auto stop = pump.run(child->pidfd(), cancel.wait_fd(), t_start + timeout);
  const auto t_end = stop ? stop->at : Clock::now();
  if (!stop || stop->reason != proc::StopReason::kExited) {
    (void)run_tool({engine, "kill", "--signal", "KILL", name}, t_end + kEngineCallBound);
  }
  auto status = child->wait();
  (void)pump.drain(Clock::now() + kDrainBound);
  auto state =
      run_tool({engine, "inspect", "--format", "{{.State.OOMKilled}} {{.State.ExitCode}}", name},
               Clock::now() + kEngineCallBound);
  const ContainerStats stats = cgroups ? cgroups->stats() : ContainerStats{};

  RunResult result = captured_result(id, request, pump, t_start, t_end);
  if (!s.seccomp_file.empty()) result.policy = PolicyId{s.policy_name, s.policy_hash};
  result.enforced = {{Aspect::kTimeout, "deadline + " + s.engine.filename().string() + " kill",
                      format_duration(timeout)},
                     {Aspect::kOutput, "capture cap per stream", format_size(cap_bytes)},
                     {Aspect::kFilesystem, "image " + s.image + " read-only, tmpfs /tmp", {}},
                     {Aspect::kEnvironment, "clean environment", {}},
                     {Aspect::kProcessTree, "PID namespace (engine)", {}},
                     {Aspect::kMemory, "engine --memory", format_size(key.memory_bytes)},
                     {Aspect::kProcesses, "engine --pids-limit", std::to_string(key.max_processes)},
                     {Aspect::kDisk, "tmpfs size", format_size(key.scratch_bytes)}};
  if (options.network_namespace)
    result.enforced.push_back({Aspect::kNetwork, "--network none", {}});
  if (!s.seccomp_file.empty()) {
    result.enforced.push_back({Aspect::kSyscallFilter,
                               "seccomp " + s.policy_name + " v" + std::to_string(s.policy_version),
                               s.policy_hash});
  }
  if (!stop || !status || !state) {
    result.outcome = Outcome::kSandboxError;
    result.error = !stop     ? "output pump: " + stop.error().describe()
                   : !status ? "wait for the engine: " + status.error().describe()
                             : "inspect the container: " + state.error().describe();
    result.setup_ms = ms_between(t_setup, t_start) + ms_between(t_end, Clock::now());
    return result;
  }
  std::istringstream fields(*state);
  std::string oom;
  int exit_code = -1;
  fields >> oom >> exit_code;
  Termination t;
  t.deadline_passed = stop->reason == proc::StopReason::kDeadline;
  t.cancelled = stop->reason == proc::StopReason::kCancelled;
  t.oom_killed = oom == "true" || stats.oom_killed;
  // The engine reports a signal as 128 + N, like a shell.
  if (exit_code > 128 && exit_code < 160) {
    t.signal = exit_code - 128;
  } else {
    t.exited = true;
    t.exit_code = exit_code;
  }
  if ((!t.exited || t.exit_code != 0) && stats.pids_limit_hit) t.limit = LimitKind::kProcesses;
  apply_termination(t, result);
  result.memory_peak_kb = stats.memory_peak_kb;
  result.setup_ms = ms_between(t_setup, t_start) + ms_between(t_end, Clock::now());
  return result;
}

void sweep_engine_containers(const std::filesystem::path& engine, const std::string& prefix) {
  const auto until = Clock::now() + kEngineCallBound;
  auto names = run_tool(
      {engine.string(), "ps", "--all", "--format", "{{.Names}}", "--filter", "name=^" + prefix},
      until);
  if (!names) return;
  std::istringstream lines(*names);
  for (std::string n; std::getline(lines, n);) {
    if (n.starts_with(prefix)) {
      (void)run_tool({engine.string(), "rm", "--force", "--time", "0", n}, until);
    }
  }
}

}  // namespace cordon::oci
