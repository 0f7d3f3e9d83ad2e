// run_in_engine: one `podman run` per request, judged and removed afterwards.
#include "engine_run.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <sstream>

#include "container_cgroups.h"
#include "cordon/interpreter.h"
#include "cordon/proc/pipe.h"
#include "cordon/scope_exit.h"
#include "cordon/temp_dir.h"
#include "cordon/unique_fd.h"
#include "cordon/units.h"

namespace cordon::oci {
namespace {

using std::chrono::milliseconds;

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
                                                 const RunRequest& request, const std::string& name,
                                                 const std::filesystem::path& start_fifo) {
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
      interpreter_argv(request.language, interp, request.code, kCodeFile, &needs_file);
  if (needs_file) {
    return fail(ErrorCode::kUnavailable, "code too long for argv is not supported in engine mode");
  }
  // --mount's value is comma-separated: a comma in the path would be read as an option.
  if (start_fifo.string().find(',') != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument,
                "the runtime directory's path has a comma: " + start_fifo.string());
  }
  const BundleKey key = bundle_key(request.limits, options);
  std::vector<std::string> a = {
      s.engine.string(), "run",
      "--name",          name,
      "--pull",          "never",
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
  if (key.cpu_time) {
    // RLIMIT_CPU as the OCI mode sets it (container_plan.cpp): whole seconds, rounded up,
    // SIGKILL a second after SIGXCPU. Without it a CPU limit asked for was dropped.
    const auto secs = std::max<std::int64_t>((key.cpu_time->count() + 999) / 1000, 1);
    a.insert(a.end(), {"--ulimit", "cpu=" + std::to_string(secs) + ":" + std::to_string(secs + 1)});
  }
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
  a.insert(a.end(), {"--mount", "type=bind,source=" + start_fifo.string() +
                                    ",destination=" + kEngineStartPath});
  a.push_back(s.image);
  // The start signal (engine_run.h): no byte, no code; the FIFO is closed before exec.
  a.insert(a.end(),
           {"/usr/bin/sh", "-c", std::string("printf s >") + kEngineStartPath + " && exec \"$@\"",
            "cordon-start"});
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

namespace {

// An engine container as the run driver sees it: the foreground `podman run` is the tree
// (its pidfd ends the pump), the engine kills and removes the container.
class EngineTree final : public StartedTree {
 public:
  EngineTree(const EngineSettings& s, std::string name, proc::ChildProcess engine_run,
             std::optional<ContainerCgroups> cgroups)
      : s_(s),
        name_(std::move(name)),
        child_(std::move(engine_run)),
        cgroups_(std::move(cgroups)) {}
  ~EngineTree() override { remove(); }
  EngineTree(const EngineTree&) = delete;
  EngineTree& operator=(const EngineTree&) = delete;

  [[nodiscard]] int exit_fd() const override { return child_.pidfd(); }
  // The foreground `podman run` returns only once it relayed all the container's output.
  [[nodiscard]] bool ends_once_output_is_read() const override { return true; }

  void kill() override {
    pollfd pfd{child_.pidfd(), POLLIN, 0};
    if (::poll(&pfd, 1, 0) == 1) return;  // the engine returned: the container ended
    (void)run_tool({s_.engine.string(), "kill", "--signal", "KILL", name_},
                   Clock::now() + kEngineCallBound);
  }

  [[nodiscard]] Status finish(RunClock::time_point until) override {
    pollfd pfd{child_.pidfd(), POLLIN, 0};
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now()).count();
    if (left <= 0 || ::poll(&pfd, 1, static_cast<int>(left)) != 1) {
      return fail(ErrorCode::kTimeout, "the engine did not return after the container stopped");
    }
    if (auto st = child_.wait(); !st) return std::unexpected(st.error());
    auto state = run_tool({s_.engine.string(), "inspect", "--format",
                           "{{.State.OOMKilled}} {{.State.ExitCode}}", name_},
                          until);
    if (!state) return std::unexpected(state.error());
    state_ = std::move(*state);
    if (cgroups_) stats_ = cgroups_->stats();
    return {};
  }

  [[nodiscard]] Status describe_end(Termination& t, RunResult& result) override {
    std::istringstream fields(state_);
    std::string oom;
    int exit_code = -1;
    fields >> oom >> exit_code;
    t.oom_killed = oom == "true" || stats_.oom_killed;
    // The engine reports a signal as 128 + N, like a shell.
    if (exit_code > 128 && exit_code < 160) {
      t.signal = exit_code - 128;
    } else {
      t.exited = true;
      t.exit_code = exit_code;
    }
    t.process_ceiling_hit = stats_.pids_limit_hit;
    result.memory_peak_kb = stats_.memory_peak_kb;
    if (stats_.cpu_usec) result.cpu_ms = *stats_.cpu_usec / 1000;
    return {};
  }

  [[nodiscard]] Result<std::filesystem::path> artifact_dir() override {
    return fail(ErrorCode::kUnavailable, "engine mode collects no artifacts");
  }

  [[nodiscard]] Status teardown(RunClock::time_point /*until*/) override {
    remove();
    return {};
  }

 private:
  void remove() {
    if (removed_) return;
    removed_ = true;
    (void)run_tool({s_.engine.string(), "rm", "--force", "--time", "0", name_},
                   Clock::now() + kEngineCallBound);
    remove_engine_cgroups(s_, name_);
  }

  const EngineSettings& s_;
  std::string name_;
  proc::ChildProcess child_;
  std::optional<ContainerCgroups> cgroups_;
  std::string state_;
  ContainerStats stats_;
  bool removed_ = false;
};

enum class StartWait { kStarted, kEngineEnded, kCancelled, kSetupBound, kPollFailed };

// Until the wrapper's start byte arrives on `fifo`, the engine ends, the run is cancelled
// or `until` passes. The byte is read before the engine's end is looked at: code as quick
// as `true` has its engine gone by the time this wakes, and it did start.
StartWait wait_for_start(int fifo, int engine_pidfd, int cancel_fd, RunClock::time_point until) {
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(until - RunClock::now()).count();
    if (left <= 0) return StartWait::kSetupBound;
    std::array<pollfd, 3> p{{{fifo, POLLIN, 0}, {engine_pidfd, POLLIN, 0}, {cancel_fd, POLLIN, 0}}};
    if (::poll(p.data(), p.size(), static_cast<int>(std::min<std::int64_t>(left, 60000))) < 0) {
      if (errno == EINTR) continue;
      return StartWait::kPollFailed;
    }
    if ((p[0].revents & POLLIN) != 0) {
      char byte = 0;
      if (::read(fifo, &byte, 1) == 1) return StartWait::kStarted;
    }
    if (p[1].revents != 0) return StartWait::kEngineEnded;
    if (p[2].revents != 0) return StartWait::kCancelled;
    // A writer came and went without a byte (POLLHUP stays set): only the engine's end or
    // the bound can end the wait now.
    if ((p[0].revents & (POLLHUP | POLLERR)) != 0) fifo = -1;
  }
}

// The end of what the engine wrote to stderr before it ended without starting the code:
// its own reason ("Error: …"), read without waiting for a writer that may still hold it.
std::string engine_stderr(RunPipes& pipes) {
  pipes.out.write.reset();
  pipes.err.write.reset();
  std::string text;
  char buf[4096];
  const auto until = Clock::now() + milliseconds(500);
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now()).count();
    pollfd p{pipes.err.read.get(), POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) != 1) break;
    const ssize_t n = ::read(pipes.err.read.get(), buf, sizeof(buf));
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > 16384) text.erase(0, text.size() - 16384);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.size() > 2000) text = "…" + text.substr(text.size() - 2000);
  return text;
}

}  // namespace

RunResult run_in_engine(const EngineSettings& s, const ContainerOptions& options,
                        const RunRequest& request, const std::string& name,
                        const std::filesystem::path& run_dir, RunClock::time_point setup_until,
                        const CancelToken& cancel, RunStateReporter& state, RunFrame frame) {
  auto error = [&](std::string why) { return sandbox_error(frame.backend, std::move(why)); };
  const std::filesystem::path fifo_path = run_dir / "start";
  auto argv = engine_run_argv(s, options, request, name, fifo_path);
  if (!argv) return error(argv.error().describe());
  // The start FIFO, world-writable (the code's user opens it) in a directory only root
  // can enter. The read end is open before the engine starts: the wrapper's open for
  // writing would block without a reader.
  if (::mkdir(run_dir.c_str(), 0700) != 0) {
    return error("mkdir " + run_dir.string() + ": " + std::strerror(errno));
  }
  const ScopeExit drop_run_dir([&run_dir] { (void)remove_tree(run_dir); });
  if (::mkfifo(fifo_path.c_str(), 0600) != 0 || ::chmod(fifo_path.c_str(), 0622) != 0) {
    return error("mkfifo " + fifo_path.string() + ": " + std::strerror(errno));
  }
  UniqueFd start(::open(fifo_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!start) return error("open " + fifo_path.string() + ": " + std::strerror(errno));
  const BundleKey key = bundle_key(request.limits, options);
  std::optional<ContainerCgroups> cgroups;
  if (!s.memory_own.empty()) {
    auto made = ContainerCgroups::create(s.hierarchies, name, key.memory_bytes, key.max_processes);
    if (!made) return error("cgroups: " + made.error().describe());
    cgroups = std::move(*made);
  }
  auto pipes = make_run_pipes(request);
  if (!pipes) return error("pipes: " + pipes.error().describe());
  if (cancel.cancelled()) {
    remove_engine_cgroups(s, name);
    return cancelled_before_start(frame.backend, frame.setup_started);
  }
  proc::SpawnOptions so;
  so.path = s.engine.string();
  so.argv = *argv;
  so.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  so.stdin_fd = pipes->child_stdin();
  so.stdout_fd = pipes->child_stdout();
  so.stderr_fd = pipes->child_stderr();
  auto child = proc::spawn(so);
  if (!child) {
    remove_engine_cgroups(s, name);
    return error("start " + s.engine.string() + ": " + child.error().describe());
  }
  const int engine_pidfd = child->pidfd();
  EngineTree tree(s, name, std::move(*child), std::move(cgroups));
  const std::string engine = s.engine.filename().string();
  switch (wait_for_start(start.get(), engine_pidfd, cancel.wait_fd(), setup_until)) {
    case StartWait::kStarted:
      break;
    case StartWait::kEngineEnded: {
      std::string why = engine_stderr(*pipes);
      return error(engine + " ended before the code started" +
                   (why.empty() ? std::string() : ": " + why));
    }
    case StartWait::kCancelled:
      tree.kill();
      return cancelled_before_start(frame.backend, frame.setup_started);
    case StartWait::kSetupBound:
      tree.kill();
      return error(engine + " did not start the code within the set-up bound");
    case StartWait::kPollFailed: {
      const std::string why = std::strerror(errno);
      tree.kill();
      return error("poll: " + why);
    }
  }
  start.reset();
  // frame.enforced and timeout_mechanism: the backend's declaration (declare()).
  if (s.seccomp_file.empty()) frame.policy.reset();
  return drive_run(request, cancel, state, tree, std::move(*pipes), std::move(frame));
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
