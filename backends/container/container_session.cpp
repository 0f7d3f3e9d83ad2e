// ContainerBackend::open_session and a session's calls: the same steps as a one-shot run
// (container_backend.cpp), but the container is the session's and each call's order is a
// kSessionRun whose stdio the init connects for (oci_init_channel.h).
#include "container_session.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <utility>

#include "cordon/claims.h"
#include "cordon/kernel_call.h"
#include "cordon/limit_check.h"
#include "cordon/run_driver.h"
#include "cordon/scope_exit.h"
#include "cordon/session_workspace.h"
#include "cordon/workspace.h"
#include "init_listener.h"
#include "init_report.h"

namespace cordon::oci {
namespace {

namespace fs = std::filesystem;

// The kernel's order ends by cordon (kEndRun, EOF) or with its process, not at a deadline of
// its own: each call's deadline is the host's.
constexpr std::chrono::milliseconds kKernelBackstop = std::chrono::hours(24 * 365);

// One call of a session as the shared driver sees it: it ends with the init's report for
// it; kill() asks the init to end the call (kEndRun: every process of the container but the
// init), never the container. The groups are the session's: a call's CPU time is the growth
// during it (mark_run_start), its memory peak the session's.
class ContainerCallTree final : public StartedTree {
 public:
  // `pids_hit_before`: the session's pids group had refused a fork before this call (v1
  // keeps no count that could be compared, so this call's own hit cannot be told then).
  // `tree_cpu_us`: the init's reaped-CPU figure at the previous call's end (it counts over
  // the session), updated to this call's end.
  ContainerCallTree(LiveContainer& c, bool gvisor, bool pids_hit_before, std::int64_t* tree_cpu_us)
      : c_(c), gvisor_(gvisor), pids_hit_before_(pids_hit_before), tree_cpu_us_(tree_cpu_us) {}

  // Readable when the init reports the call's end, or closes (it died).
  [[nodiscard]] int exit_fd() const override { return c_.ctl.get(); }

  void kill() override {
    // A call that ended on its own has its report waiting: nothing to end.
    pollfd pfd{c_.ctl.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 0) == 1) return;
    init::OrderHeader end;
    end.kind = init::OrderKind::kEndRun;
    end.size = 0;
    // A failure leaves the call running until its backstop: finish() waits for the report.
    (void)send_to_init(c_.ctl.get(),
                       std::string_view(reinterpret_cast<const char*>(&end), sizeof(end)));
  }

  [[nodiscard]] Status finish(RunClock::time_point until) override {
    auto report = receive_init_report(c_.ctl.get(), until);
    if (!report) return std::unexpected(report.error());
    report_ = *report;
    if (!report_) {
      // No report: the init died (or is stuck); the container is no session any more.
      lost_ = true;
      (void)c_.cgroups.wait_empty(until);
    } else {
      const std::int64_t total = report_->tree_cpu_us;
      report_->tree_cpu_us -= *tree_cpu_us_;
      *tree_cpu_us_ = total;
    }
    stats_ = c_.cgroups.stats();
    if (pids_hit_before_) stats_.pids_limit_hit = false;
    return {};
  }

  [[nodiscard]] Status describe_end(Termination& t, RunResult& result) override {
    return describe_container_end(report_, stats_, gvisor_, t, result);
  }

  // A session's files stay in its workspace: no artifacts are collected from a call.
  [[nodiscard]] Result<std::filesystem::path> artifact_dir() override {
    return fail(ErrorCode::kInvalidArgument, "a session's call collects no artifacts");
  }
  // The container and its groups are the session's: nothing of the call is left to remove.
  [[nodiscard]] Status teardown(RunClock::time_point /*until*/) override { return {}; }
  [[nodiscard]] std::optional<ResourceSample> sample() const override { return c_.cgroups.usage(); }

  [[nodiscard]] bool lost() const { return lost_; }

 private:
  LiveContainer& c_;
  bool gvisor_;
  bool pids_hit_before_;
  std::int64_t* tree_cpu_us_;
  std::optional<init::Report> report_;
  ContainerStats stats_;
  bool lost_ = false;
};

}  // namespace

Result<std::unique_ptr<BackendSession>> ContainerBackend::open_session(
    const SessionOptions& options) {
  if (!options_.engine.empty()) {
    return fail(ErrorCode::kUnavailable,
                "the container backend in engine mode (" + options_.engine +
                    ") holds no sessions: each call is a `" + options_.engine +
                    " run` whose container ends with it, with no init of cordon's in it to "
                    "serve a next call; use the OCI runtime mode (runc or runsc)");
  }
  if (options_.runtime != "runc" && options_.runtime != "runsc") {
    return fail(ErrorCode::kUnavailable,
                "sessions are held on runc and runsc only; a session's container has not been "
                "tried with " +
                    options_.runtime + ", so it holds none");
  }
  RunRequest base = options.base;
  base.limits.scratch_bytes = options.workspace_bytes;
  if (auto st = prepare(); !st) return std::unexpected(st.error());
  if (auto st = check_limits(base.limits, capabilities(base.limits), name()); !st) {
    return std::unexpected(st.error());
  }
  // A container of its own, never a pooled one: its scratch is the session's workspace.
  auto launched = launch(bundle_key(base.limits, options_), Clock::now() + base.setup_bound);
  if (!launched) {
    return fail(launched.error().code,
                "start the session's container: " + launched.error().describe());
  }
  LiveContainer c = std::move(*launched);
  ScopeExit undo([&] { remove(c); });
  c.stdin_write.reset();  // each call's stdin is its own (oci_init_channel.h)
  const fs::path scratch = instance_->bundles_dir() / c.name / "scratch";
  UniqueFd workspace(::open(scratch.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!workspace) return fail_errno("open the session's workspace " + scratch.string());
  // An allow-list's proxy is the session's, for its life: its limits count across calls.
  BundleProxy proxy;
  if (base.network.any()) {
    auto started = start_bundle_proxy(instance_->bundles_dir() / c.name, base.network);
    if (!started) {
      return fail(started.error().code, "network proxy: " + started.error().describe());
    }
    proxy = std::move(*started);
  }
  undo.dismiss();
  return std::make_unique<ContainerSession>(*this, std::move(c), std::move(workspace),
                                            std::move(proxy), std::move(base));
}

ContainerSession::ContainerSession(ContainerBackend& backend, LiveContainer container,
                                   UniqueFd workspace, ContainerBackend::BundleProxy proxy,
                                   RunRequest base)
    : WorkspaceSession(std::move(workspace), kSandboxUid, kSandboxGid),
      backend_(backend),
      container_(std::move(container)),
      proxy_(std::move(proxy)),
      base_(std::move(base)) {}

ContainerSession::~ContainerSession() {
  // The workspace's fd first: the scratch tmpfs under it is unmounted with the bundle.
  close_workspace();
  backend_.remove(container_);
}

Status ContainerSession::place_call_files(const RunPayload& payload, const RunRequest& call) {
  // The previous call's code file, if any, goes: write_new_file never replaces a file.
  const fs::path code_file = backend_.instance_->bundles_dir() / container_.name / "code" / "code";
  if (::unlink(code_file.c_str()) != 0 && errno != ENOENT)
    return fail_errno("remove the code file");
  if (payload.code_file) {
    if (auto st = write_new_file(code_file, *payload.code_file, 0444); !st) return st;
  }
  // Into the workspace the code may have changed: beneath it, through no link it planted.
  for (const auto& [path, bytes] : call.input_files) {
    if (auto st = write_workspace_file(workspace_fd(), path, bytes, kSandboxUid, kSandboxGid);
        !st) {
      return st;
    }
  }
  return {};
}

RunResult ContainerSession::run(const RunRequest& request, const CancelToken& cancel,
                                RunObserver* observer) {
  ContainerBackend& b = backend_;
  const RunRequest call = as_session_call(request, base_);
  ++calls_;
  const Probe host = b.probe();
  RunSetup setup(b, call, observer, &host);
  if (setup.refused) return std::move(*setup.refused);
  if (!lost_.empty()) return setup.error(lost_);
  if (auto refused = other_list_refusal(call.network, base_.network)) {
    return setup.error(*refused);
  }
  auto payload = make_run_payload(call, b.options_);
  if (!payload) return setup.error("plan: " + payload.error().describe());
  payload->relay_socket = proxy_.relay_socket;
  if (auto st = place_call_files(*payload, call); !st) {
    return setup.error("place files: " + st.error().describe());
  }
  RunFrame frame = setup.frame();
  if (b.options_.seccomp) frame.policy = PolicyId{b.policy_name_, b.policy_hash_};
  const Capabilities declared = b.declare(call.limits);
  frame.timeout_mechanism = declared.find(Aspect::kTimeout)->mechanism;
  frame.enforced = enforced_from(declared);
  if (proxy_.network) proxy_.network->enforce_in(frame.enforced);

  if (call.language == Language::kPython || kernel_) {
    RunResult result = run_in_kernel(call, *payload, setup, std::move(frame), cancel);
    if (proxy_.network) proxy_.network->report_call_into(result, &reported_);
    return result;
  }
  if (cancel.cancelled()) return setup.cancelled();
  // Also takes an OOM event a previous call left unread.
  const bool pids_hit_before = container_.cgroups.stats().pids_limit_hit;
  container_.cgroups.mark_run_start();
  auto stdio = start_order(*payload, effective_timeout(call) + kInitBackstopMargin, setup.until);
  if (!stdio) return setup.error(stdio.error().describe());
  RunPipes pipes{
      {std::move((*stdio)[1]), UniqueFd()}, {std::move((*stdio)[2]), UniqueFd()}, std::nullopt};
  if (call.stdin_data) {
    pipes.in = proc::Pipe{UniqueFd(), std::move((*stdio)[0])};
  } else {
    (*stdio)[0].reset();  // EOF, as /dev/null would give
  }
  ContainerCallTree tree(container_, b.gvisor_, pids_hit_before, &tree_cpu_us_);
  RunResult result = drive_run(call, cancel, setup.state, tree, std::move(pipes), std::move(frame));
  if (result.cpu_ms) cpu_us_ += *result.cpu_ms * 1000;
  if (tree.lost()) {
    lost_ = "the session's container ended during call " + std::to_string(calls_) +
            (result.error ? " (" + *result.error + ")" : std::string());
  }
  if (proxy_.network) proxy_.network->report_call_into(result, &reported_);
  return result;
}

Result<std::array<UniqueFd, 3>> ContainerSession::start_order(const RunPayload& payload,
                                                              std::chrono::milliseconds backstop,
                                                              Clock::time_point until) {
  // The order's stdio listeners, there from before the order until the init connected.
  const fs::path code_dir = backend_.instance_->bundles_dir() / container_.name / "code";
  const std::array<fs::path, 3> paths = {code_dir / kCallStdinName, code_dir / kCallStdoutName,
                                         code_dir / kCallStderrName};
  ScopeExit unlink_all([&paths] {
    for (const auto& p : paths) ::unlink(p.c_str());
  });
  std::array<UniqueFd, 3> listeners;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    auto l = listen_for_init(paths[i]);
    if (!l) return fail(l.error().code, "the call's stdio: " + l.error().describe());
    listeners[i] = std::move(*l);
  }
  if (auto st = send_to_init(container_.ctl.get(),
                             encode_init_request(payload, backstop, init::OrderKind::kSessionRun));
      !st) {
    lost_ = "the session's container is gone: " + st.error().describe();
    return fail(ErrorCode::kSystem, lost_);
  }
  std::array<UniqueFd, 3> stdio;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    // Only a process of the container (its init: no other runs between calls) is taken.
    auto fd = accept_init(std::move(listeners[i]), paths[i], until, container_.runner.pidfd(),
                          [this](pid_t peer) { return container_.cgroups.holds(peer); });
    if (!fd) {
      lost_ = "the session's container did not take call " + std::to_string(calls_) + ": " +
              fd.error().describe();
      return fail(ErrorCode::kSystem, lost_);
    }
    stdio[i] = std::move(*fd);
  }
  return stdio;
}

RunResult ContainerSession::run_in_kernel(const RunRequest& call, const RunPayload& payload,
                                          RunSetup& setup, RunFrame frame,
                                          const CancelToken& cancel) {
  ContainerBackend& b = backend_;
  if (!kernel_) {
    // The session's python with the session's environment, as the init's current order.
    RunRequest shape = base_;
    shape.language = Language::kPython;
    shape.code = "pass";
    auto python = make_run_payload(shape, b.options_);
    if (!python) return setup.error("the session's python: " + python.error().describe());
    RunPayload kernel;
    kernel.env = python->env;
    kernel.relay_port = payload.relay_port;  // the session's relay, if it has a list
    kernel.relay_socket = payload.relay_socket;
    struct stat ns{};
    if (::stat("/proc/self/ns/pid", &ns) != 0) return setup.error("stat /proc/self/ns/pid");
    kernel.argv = kernel_argv(python->argv[0], static_cast<std::uint64_t>(ns.st_ino));
    auto stdio = start_order(kernel, kKernelBackstop, setup.until);
    if (!stdio) return setup.error("start the session's interpreter: " + stdio.error().describe());
    for (const int fd : {(*stdio)[1].get(), (*stdio)[2].get()}) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    kernel_.emplace(std::move((*stdio)[0]));
    kernel_out_ = std::move((*stdio)[1]);
    kernel_err_ = std::move((*stdio)[2]);
  }
  const bool python = call.language == Language::kPython;
  KernelCall order;
  order.language = python ? "python" : std::string(to_string(call.language));
  order.code = call.code;
  if (!python) order.argv = payload.argv;  // a code file is in /.cordon already
  order.stdin_data = call.stdin_data;
  StartedKernel started;
  started.client = &*kernel_;
  started.stdout_fd = kernel_out_.get();
  started.stderr_fd = kernel_err_.get();
  started.expects_sweep = true;
  started.end = [this](RunClock::time_point kill_at, RunClock::time_point until) {
    return end_kernel(kill_at, until);
  };
  // Also takes an OOM event a previous call left unread.
  const bool pids_hit_before = container_.cgroups.stats().pids_limit_hit;
  container_.cgroups.mark_run_start();
  const KernelCallFacts facts = [&](Termination& t, RunResult& result) {
    const ContainerStats stats = container_.cgroups.stats();
    t.oom_killed = t.oom_killed || stats.oom_killed;
    t.process_ceiling_hit = stats.pids_limit_hit && !pids_hit_before;
    if (stats.cpu_usec) result.cpu_ms = *stats.cpu_usec / 1000;
    result.memory_peak_kb = stats.memory_peak_kb;
  };
  setup.state.set(RunState::kRunning);
  RunResult result = run_kernel_call(started, order, call, cancel, setup.state.observer(), facts);
  setup.state.set(RunState::kStopping);
  if (result.state_lost) drop_kernel();
  if (result.cpu_ms) cpu_us_ += *result.cpu_ms * 1000;
  take_frame(std::move(frame), call, result);
  result.setup_ms =
      std::max<std::int64_t>(0, ms_between(setup.started, RunClock::now()) - result.wall_ms);
  return result;
}

std::optional<int> ContainerSession::end_kernel(RunClock::time_point kill_at,
                                                RunClock::time_point until) {
  // Until `kill_at` the kernel may end on its own: the init then reports by itself.
  pollfd pfd{container_.ctl.get(), POLLIN, 0};
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - RunClock::now());
  if (::poll(&pfd, 1, static_cast<int>(std::max<std::int64_t>(0, left.count()))) != 1) {
    init::OrderHeader end;
    end.kind = init::OrderKind::kEndRun;
    end.size = 0;
    (void)send_to_init(container_.ctl.get(),
                       std::string_view(reinterpret_cast<const char*>(&end), sizeof(end)));
  }
  auto report = receive_init_report(container_.ctl.get(), until);
  if (!report || !*report) {
    lost_ = "the session's container ended during call " + std::to_string(calls_) +
            ", its interpreter with it";
    return std::nullopt;
  }
  const init::Report& r = **report;
  return r.main_reaped == 1 ? std::optional<int>(r.status) : std::nullopt;
}

void ContainerSession::drop_kernel() {
  kernel_.reset();
  kernel_out_.reset();
  kernel_err_.reset();
}

Status ContainerSession::reset() {
  if (!kernel_) return {};
  const auto now = RunClock::now();
  (void)end_kernel(now, now + kDefaultSetupBound);
  drop_kernel();
  if (!lost_.empty()) return fail(ErrorCode::kUnavailable, lost_);
  return {};
}

std::optional<SessionLoss> ContainerSession::loss() {
  if (lost_.empty()) return std::nullopt;
  return SessionLoss{.oom = container_.cgroups.stats().oom_killed, .reason = lost_};
}

SessionStats ContainerSession::stats() {
  SessionStats s = workspace_stats(calls_, cpu_us_ / 1000, container_.cgroups.usage());
  s.interpreter_alive = kernel_.has_value();
  return s;
}

}  // namespace cordon::oci
