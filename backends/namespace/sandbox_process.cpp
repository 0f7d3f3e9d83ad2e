#include "sandbox_process.h"

#include <fcntl.h>
#include <linux/sched.h>  // CLONE_PIDFD
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <vector>

#include "cordon/proc/fd_passing.h"
#include "cordon/proc/pipe.h"
#include "id_maps.h"
#include "memfd_blob.h"
#include "namespace_backend.h"

namespace cordon::ns {
namespace {

using Clock = SandboxProcess::Clock;

int ms_until(Clock::time_point until) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1 << 30));
}

struct Received {
  bool eof = false;
  init::Event msg;
  UniqueFd fd;
};

Result<Received> receive(int channel) {
  Received r;
  int fd = -1;
  int count = 0;
  const ssize_t n = cordon::proc::receive_with_fds(channel, &r.msg, sizeof(r.msg), &fd, 1, &count);
  if (n < 0) return fail_errno("read the sandbox's control socket", static_cast<int>(-n));
  if (count == 1) r.fd.reset(fd);
  if (n == 0) {
    r.eof = true;
    return r;
  }
  if (static_cast<std::size_t>(n) != sizeof(init::Event)) {
    return fail(ErrorCode::kInternal, "short message on the sandbox's control socket");
  }
  return r;
}

// Waits for the next event on the channel (or EOF) until `until`.
Result<Received> next_event(int channel, Clock::time_point until) {
  for (;;) {
    struct pollfd pfd{channel, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, ms_until(until));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail_errno("poll the sandbox's control socket");
    }
    if (ready == 0) return fail(ErrorCode::kTimeout, "sandbox set-up exceeded its bound");
    return receive(channel);
  }
}

const char* to_string(CodeStage stage) {
  switch (stage) {
    case CodeStage::kOrder:
      return "read the order";
    case CodeStage::kWriteFile:
      return "write an input file";
    case CodeStage::kStartCode:
      return "fork the code's process";
    case CodeStage::kSession:
      return "setsid";
    case CodeStage::kFds:
      return "arrange fds";
    case CodeStage::kChdir:
      return "chdir";
    case CodeStage::kRlimit:
      return "setrlimit";
    case CodeStage::kExecCode:
      return "execve the code";
    case CodeStage::kRelay:
      return "listen for the network proxy's relay";
  }
  return "start the code";
}

using init::add_record;
using init::add_string;

void add_files(std::string& out, const SandboxPlan& plan) {
  for (const SandboxFile& f : plan.files) {
    if (f.directory) {
      add_string(out, OrderTag::kDir, f.path, f.mode);
    } else {
      add_record(out, OrderTag::kFile, f.mode, f.path, f.data, /*nul_between=*/true);
    }
  }
}

std::string encode_order(const CodeOrder& order) {
  const SandboxPlan& plan = *order.plan;
  std::string out;
  if (order.relay_port != 0)
    add_string(out, OrderTag::kRelay, order.relay_socket, order.relay_port);
  if (order.prestarted) {
    // The interpreter runs already, with the prestart plan's command, environment, cwd and
    // rlimits (the backend checked they are this run's): only the files and the code.
    if (order.write_files) add_files(out, plan);
    add_record(out, OrderTag::kCode, 0,
               plan.argv.size() == 3 ? std::string_view(plan.argv[2]) : std::string_view());
    return out;
  }
  add_string(out, OrderTag::kExe, plan.executable);
  for (const auto& a : plan.argv) add_string(out, OrderTag::kArg, a);
  for (const auto& e : plan.env) add_string(out, OrderTag::kEnv, e);
  add_string(out, OrderTag::kCwd, plan.cwd);
  if (order.write_files) add_files(out, plan);
  for (const auto& r : plan.rlimits) {
    const std::uint64_t v[2] = {r.setting.soft, r.setting.hard};
    add_record(out, OrderTag::kRlimit, static_cast<std::uint32_t>(r.setting.resource),
               std::string_view(reinterpret_cast<const char*>(v), sizeof(v)));
  }
  return out;
}

}  // namespace

Result<SandboxProcess> SandboxProcess::start(const SandboxStart& args, Clock::time_point until) {
  auto go = proc::make_pipe();
  if (!go) return std::unexpected(go.error());
  auto channel = proc::make_seqpacket_pair();
  if (!channel) return std::unexpected(channel.error());
  auto report = proc::make_pipe();
  if (!report) return std::unexpected(report.error());

  PreparedChild::Fds fds;
  fds.go = go->read.get();
  fds.channel = channel->write.get();
  fds.report = report->write.get();
  fds.init_exe = args.init_exe_fd;
  // cgroup v1 groups: the child joins them itself (LimitGroup::self_join_fds says why).
  std::vector<UniqueFd> join_owned;
  if (args.limits != nullptr) {
    auto opened = args.limits->self_join_fds();
    if (!opened) return std::unexpected(opened.error());
    join_owned = std::move(*opened);
  }
  std::vector<int> join_fds;
  join_fds.reserve(join_owned.size());
  for (const auto& fd : join_owned) join_fds.push_back(fd.get());
  fds.join = join_fds.data();
  fds.join_count = join_fds.size();
  auto prepared = PreparedChild::make(*args.plan, args.seccomp, fds, args.want_tmp_fd);
  if (!prepared) return std::unexpected(prepared.error());

  long pid = -1;
  int pidfd = -1;
  int clone_errno = 0;
  if (args.spawner != nullptr) {
    auto spawned = args.spawner->clone_setup(*(*prepared)->plan(), args.plan->clone_flags);
    if (spawned) {
      pid = spawned->pid;
      pidfd = spawned->pidfd.release();
    } else if (spawned.error().code != ErrorCode::kUnavailable) {
      clone_errno = spawned.error().sys_errno;
    }
    // kUnavailable: the helper is gone; this build clones itself, below.
  }
  if (pid < 0 && clone_errno == 0) {
    pid = clone_setup_process((*prepared)->init_stack_top(), args.plan->clone_flags,
                              (*prepared)->plan(), &pidfd);
    clone_errno = errno;
  }
  if (pid < 0) {
    return fail_errno("clone into new namespaces" + namespace_refusal_hint(clone_errno),
                      clone_errno);
  }

  SandboxProcess sp;
  sp.init_ = proc::ChildProcess(static_cast<pid_t>(pid), UniqueFd(pidfd));
  sp.report_ = std::move(report->read);
  // Our copies of the child's ends must go, or EOF would never come.
  report->write.reset();
  channel->write.reset();
  go->read.reset();
  join_owned.clear();

  // While the child waits: its id maps, then the v2 limit groups (before any code runs, so
  // every process of the sandbox is born inside them; it joined the v1 ones itself), then
  // go.
  if (auto st = write_id_maps(static_cast<pid_t>(pid), *args.plan); !st) {
    return std::unexpected(st.error());
  }
  if (args.limits != nullptr) {
    if (auto st = args.limits->join(static_cast<pid_t>(pid), /*include_v1=*/false); !st)
      return std::unexpected(st.error());
  }
  if (args.before_go_for_test != nullptr) args.before_go_for_test(static_cast<pid_t>(pid));
  // The set-up process may be dead already (killed, OOM): EPIPE, never a SIGPIPE that
  // would kill an embedder relying on its default disposition.
  if (proc::write_no_sigpipe(go->write.get(), "g", 1) != 1) {
    return fail_errno("release the sandbox set-up");
  }
  go->write.reset();

  // Until the init says it is ready (it then waits for the code's order).
  for (;;) {
    auto got = next_event(channel->read.get(), until);
    if (!got) return std::unexpected(got.error());
    if (got->eof) {
      return fail(ErrorCode::kInternal, "sandbox set-up: the set-up process ended without a word");
    }
    const init::Event& ev = got->msg;
    if (ev.kind == init::EventKind::kReady) break;
    if (ev.kind == init::EventKind::kTmpFd) {
      sp.tmp_ = std::move(got->fd);
      continue;
    }
    const auto stage = static_cast<ChildStage>(ev.stage);
    std::string what = std::string("sandbox set-up: ") + to_string(stage);
    if (stage == ChildStage::kMount) what += ": " + (*prepared)->describe_mount(ev.step);
    return fail_errno(std::move(what), ev.error);
  }
  sp.control_ = std::move(channel->read);
  return sp;
}

Status SandboxProcess::prestart(const CodeOrder& order, Clock::time_point until) {
  if (!control_ || launched_) {
    return fail(ErrorCode::kInternal, "this sandbox was not built or was already launched");
  }
  if (auto st = send_order(OrderKind::kPrestart, order); !st) return st;
  auto got = next_event(control_.get(), until);
  if (!got) return std::unexpected(got.error());
  if (got->eof) return fail(ErrorCode::kInternal, "prestart: the sandbox's init ended");
  if (got->msg.kind == init::EventKind::kReady) return {};
  const init::Event& ev = got->msg;
  return fail_errno(
      std::string("prestart the interpreter: ") + to_string(static_cast<CodeStage>(ev.stage)),
      ev.error);
}

Status SandboxProcess::launch(const CodeOrder& order) {
  if (!control_ || launched_) {
    return fail(ErrorCode::kInternal, "this sandbox was not built or was already launched");
  }
  launched_ = true;
  if (order.write_files) {
    for (const SandboxFile& f : order.plan->files) file_paths_.push_back(f.path);
  }
  return send_order(order.prestarted ? OrderKind::kRunPrestarted : OrderKind::kRun, order);
}

bool SandboxProcess::init_exited() const {
  if (init_.reaped()) return true;
  struct pollfd pfd{init_.pidfd(), POLLIN, 0};
  return ::poll(&pfd, 1, 0) > 0;
}

Status SandboxProcess::launch_session(const CodeOrder& order) {
  if (!control_) return fail(ErrorCode::kUnavailable, "the session's sandbox is closed");
  launched_ = true;
  report_read_.reset();
  file_paths_.clear();
  if (order.write_files) {
    for (const SandboxFile& f : order.plan->files) file_paths_.push_back(f.path);
  }
  return send_order(OrderKind::kSessionRun, order);
}

Status SandboxProcess::end_session_run() {
  if (!control_) return fail(ErrorCode::kUnavailable, "the session's sandbox is closed");
  OrderHeader header;
  header.kind = OrderKind::kEndRun;
  if (::send(control_.get(), &header, sizeof(header), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(sizeof(header))) {
    return fail_errno("ask the session's init to end the run");
  }
  return {};
}

Result<init::Report> SandboxProcess::session_report(Clock::time_point until) {
  if (!report_) return fail(ErrorCode::kUnavailable, "the session's sandbox is closed");
  for (;;) {
    struct pollfd pfd{report_.get(), POLLIN, 0};
    const int ready = ::poll(&pfd, 1, ms_until(until));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return fail_errno("poll the session's report");
    if (ready == 0) return fail(ErrorCode::kTimeout, "no report from the session's init in time");
    break;
  }
  init::Report r;
  const ssize_t n = ::read(report_.get(), &r, sizeof(r));
  if (n == static_cast<ssize_t>(sizeof(r)) && init::is_complete(r)) {
    report_read_ = r;
    return r;
  }
  if (n == 0) {
    if (auto why = start_failure()) return fail(ErrorCode::kUnavailable, std::move(*why));
    return fail(ErrorCode::kUnavailable, "the session's sandbox ended");
  }
  return fail(ErrorCode::kInternal, "a damaged report from the session's init");
}

Result<proc::ExitInfo> SandboxProcess::close_session(Clock::time_point until) {
  control_.reset();
  struct pollfd pfd{init_.pidfd(), POLLIN, 0};
  while (::poll(&pfd, 1, ms_until(until)) < 0 && errno == EINTR) {
  }
  if ((pfd.revents & POLLIN) == 0) kill();
  auto info = init_.wait();
  report_.reset();
  return info;
}

Status SandboxProcess::send_order(OrderKind kind, const CodeOrder& order) {
  UniqueFd dev_null;
  if (order.stdin_fd < 0 || order.stdout_fd < 0 || order.stderr_fd < 0) {
    dev_null.reset(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!dev_null) return fail_errno("open /dev/null");
  }
  auto or_null = [&](int fd) { return fd >= 0 ? fd : dev_null.get(); };

  // The order travels in the message when it fits, else in a memfd (ns_init_channel.h).
  const std::string blob = encode_order(order);
  OrderHeader header;
  header.size = static_cast<std::uint32_t>(blob.size());
  header.kind = kind;
  const bool in_message = blob.size() <= kInlineOrderMaxBytes;
  UniqueFd memfd;
  std::string message(reinterpret_cast<const char*>(&header), sizeof(header));
  if (in_message) {
    message += blob;
  } else {
    auto made = memfd_holding("cordon-order", blob, "the sandbox's order");
    if (!made) return std::unexpected(made.error());
    memfd = std::move(*made);
  }
  std::vector<int> fds;
  if (!in_message) fds.push_back(memfd.get());
  for (const int fd : {order.stdin_fd, order.stdout_fd, order.stderr_fd})
    fds.push_back(or_null(fd));
  // The fifth fd: a run's relay directory, or a prestart's preload library (the init tells
  // them apart by the order's kind).
  if (order.relay_dir_fd >= 0) fds.push_back(order.relay_dir_fd);
  if (kind == OrderKind::kPrestart && order.preload_fd >= 0) fds.push_back(order.preload_fd);
  if (const int err = cordon::proc::send_with_fds(control_.get(), message.data(), message.size(),
                                                  fds.data(), static_cast<int>(fds.size()));
      err != 0) {
    if (err == EPIPE || err == ECONNRESET) {
      return fail(ErrorCode::kUnavailable,
                  "the sandbox's init is gone (it was killed while it waited)");
    }
    return fail_errno("send the code to the sandbox's init", err);
  }
  return {};
}

std::optional<std::string> SandboxProcess::start_failure() {
  if (!control_) return std::nullopt;
  struct pollfd pfd{control_.get(), POLLIN, 0};
  if (::poll(&pfd, 1, 0) <= 0) return std::nullopt;
  auto got = receive(control_.get());
  if (!got || got->eof || got->msg.kind != init::EventKind::kFailed) return std::nullopt;
  const init::Event& ev = got->msg;
  const auto stage = static_cast<CodeStage>(ev.stage);
  std::string what = std::string("start the code: ") + to_string(stage);
  if (stage == CodeStage::kWriteFile && ev.step >= 0 &&
      static_cast<std::size_t>(ev.step) < file_paths_.size()) {
    what += " " + file_paths_[static_cast<std::size_t>(ev.step)];
  }
  return Error{ErrorCode::kSystem, ev.error, std::move(what)}.describe();
}

void SandboxProcess::kill() const { (void)init_.signal(SIGKILL); }

bool SandboxProcess::reported() {
  if (!report_read_ && report_) {
    struct pollfd ready{report_.get(), POLLIN, 0};
    init::Report r;
    if (::poll(&ready, 1, 0) == 1 && (ready.revents & POLLIN) != 0 &&
        ::read(report_.get(), &r, sizeof(r)) == static_cast<ssize_t>(sizeof(r)) &&
        r.magic == init::kReportMagic && r.main_reaped == 1) {
      report_read_ = r;
    }
  }
  return report_read_ && init::is_complete(*report_read_);
}

Result<SandboxExit> SandboxProcess::finish(Clock::time_point until) {
  SandboxExit out;
  const bool complete = reported();
  if (complete && report_first_) {
    out.report = report_read_;
    out.init_reaped = false;
    return out;
  }
  // After its report the init waits to be killed; without one it was killed or died, or
  // the deadline came first: wait for it, bounded.
  if (complete) kill();
  struct pollfd pfd{init_.pidfd(), POLLIN, 0};
  while (::poll(&pfd, 1, ms_until(until)) < 0 && errno == EINTR) {
  }
  if ((pfd.revents & POLLIN) == 0) kill();
  // Reaping the init returns only once every process of its PID namespace is gone: the
  // kernel's zap_pid_ns_processes waits for them before the init becomes a zombie.
  auto info = init_.wait();
  if (!info) return std::unexpected(info.error());
  out.init = *info;
  (void)reported();  // a report written just before the init died
  out.report = report_read_;
  report_.reset();
  return out;
}

Status SandboxTree::finish(RunClock::time_point until) {
  auto finished = sandbox_.finish(until);
  if (!finished) return std::unexpected(finished.error());
  exit_ = *finished;
  return {};
}

Status SandboxTree::describe_end(Termination& t, RunResult& result) {
  proc::LimitGroupStats stats;
  if (limits_) stats = limits_->stats();
  const auto& report = exit_.report;
  if (report) {
    take_init_report(report->status, report->main_maxrss_kb, report->tree_cpu_us, t, result);
  } else if (auto why = sandbox_.start_failure()) {
    // The code never ran: the sandbox failed to start it, which is not the code's failure.
    return fail(ErrorCode::kSystem, std::move(*why));
  } else if (!t.deadline_passed && !t.cancelled) {
    // The init died without reporting: something killed it from outside (the OOM killer,
    // an administrator); the code's own status is unknown.
    t.signal = exit_.init.signal();
  }
  t.oom_killed = stats.oom_killed;
  t.process_ceiling_hit = stats.pids_limit_hit;
  // The group counts every process of the sandbox, orphans included.
  if (stats.cpu_usec) result.cpu_ms = *stats.cpu_usec / 1000;
  result.memory_peak_kb = stats.memory_peak_kb;
  if (!report && !t.deadline_passed && !t.cancelled && !t.oom_killed) {
    return fail(ErrorCode::kInternal,
                "the sandbox's init ended without reporting the code's status");
  }
  return {};
}

Result<std::filesystem::path> SandboxTree::artifact_dir() {
  tmp_ = sandbox_.take_tmp_fd();
  if (!tmp_) return fail(ErrorCode::kInternal, "no /tmp from the sandbox");
  return std::filesystem::path("/proc/self/fd/" + std::to_string(tmp_.get()));
}

Status SandboxTree::teardown(RunClock::time_point until) {
  if (retire_ && !exit_.init_reaped) {
    retire_(std::move(sandbox_), std::move(limits_));
    return {};
  }
  if (!limits_) return {};
  if (auto st = limits_->remove(until); !st) {
    return fail(st.error().code, "remove limit groups: " + st.error().describe());
  }
  return {};
}

proc::LimitGroupStats session_call_limits(const proc::LimitGroup* limits,
                                          const proc::LimitGroupStats& before,
                                          bool sigkilled_unasked, Termination& t,
                                          RunResult& result) {
  if (limits == nullptr) return {};
  const proc::LimitGroupStats now = limits->stats();
  // The groups' flags say "ever in this session": a first OOM kill is this call's, and a
  // later one is when the kernel, not the host, SIGKILLed this call's main process.
  t.oom_killed = now.oom_killed && (!before.oom_killed || sigkilled_unasked);
  t.process_ceiling_hit = now.pids_limit_hit && !before.pids_limit_hit;
  if (now.cpu_usec && before.cpu_usec) result.cpu_ms = (*now.cpu_usec - *before.cpu_usec) / 1000;
  result.memory_peak_kb = now.memory_peak_kb;
  return now;
}

}  // namespace cordon::ns
