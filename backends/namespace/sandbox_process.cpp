#include "sandbox_process.h"

#include <fcntl.h>
#include <linux/sched.h>  // CLONE_PIDFD
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <vector>

#include "cordon/proc/pipe.h"
#include "id_maps.h"
#include "namespace_backend.h"

namespace cordon::ns {
namespace {

using Clock = SandboxProcess::Clock;

struct KernelSigset {
  unsigned long bits[_NSIG / (8 * sizeof(unsigned long))];
};

int ms_until(Clock::time_point until) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1 << 30));
}

struct Received {
  bool eof = false;
  ChildMessage msg;
  UniqueFd fd;
};

Result<Received> receive(int channel) {
  Received r;
  struct iovec iov{&r.msg, sizeof(r.msg)};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof(control);
  ssize_t n = 0;
  do {
    n = ::recvmsg(channel, &mh, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return fail_errno("read the sandbox set-up channel");
  if (n == 0) {
    r.eof = true;
    return r;
  }
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
      r.fd.reset(fd);
    }
  }
  if (static_cast<std::size_t>(n) != sizeof(ChildMessage)) {
    return fail(ErrorCode::kInternal, "short message on the sandbox set-up channel");
  }
  return r;
}

}  // namespace

Result<SandboxProcess> SandboxProcess::start(const SandboxStart& args, Clock::time_point until) {
  auto go = proc::make_pipe();
  if (!go) return std::unexpected(go.error());
  auto channel = proc::make_seqpacket_pair();
  if (!channel) return std::unexpected(channel.error());
  auto report = proc::make_pipe();
  if (!report) return std::unexpected(report.error());
  UniqueFd dev_null;
  if (args.stdin_fd < 0 || args.stdout_fd < 0 || args.stderr_fd < 0) {
    dev_null.reset(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!dev_null) return fail_errno("open /dev/null");
  }
  auto or_null = [&](int fd) { return fd >= 0 ? fd : dev_null.get(); };

  PreparedChild::Fds fds;
  fds.go = go->read.get();
  fds.channel = channel->write.get();
  fds.report = report->write.get();
  fds.init_exe = args.init_exe_fd;
  fds.in = or_null(args.stdin_fd);
  fds.out = or_null(args.stdout_fd);
  fds.err = or_null(args.stderr_fd);
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

  // Block every signal (glibc's internal ones too) across clone, as proc::spawn does: the
  // child resets all dispositions before unblocking, so no handler of ours runs there.
  KernelSigset all;
  std::memset(&all, 0xff, sizeof(all));
  KernelSigset old{};
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(KernelSigset));
  int pidfd = -1;
  // No CLONE_VM: see child_setup.h. CLONE_PIDFD: a pid-reuse-proof handle, atomically.
  const long pid = ::clone(sandbox_child_main, (*prepared)->init_stack_top(),
                           static_cast<int>(args.plan->clone_flags | CLONE_PIDFD | SIGCHLD),
                           (*prepared)->plan(), &pidfd);
  const int clone_errno = errno;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, nullptr, sizeof(KernelSigset));
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
  if (::write(go->write.get(), "g", 1) != 1) return fail_errno("release the sandbox set-up");
  go->write.reset();

  // Until EOF: both the set-up process and the code have exec'd (the channel is CLOEXEC).
  for (;;) {
    struct pollfd pfd{channel->read.get(), POLLIN, 0};
    const int ready = ::poll(&pfd, 1, ms_until(until));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail_errno("poll the sandbox set-up channel");
    }
    if (ready == 0) return fail(ErrorCode::kTimeout, "sandbox set-up exceeded its bound");
    auto got = receive(channel->read.get());
    if (!got) return std::unexpected(got.error());
    if (got->eof) break;
    const auto stage = static_cast<ChildStage>(got->msg.stage);
    if (stage == ChildStage::kTmpFd && got->msg.error == 0) {
      sp.tmp_ = std::move(got->fd);
      continue;
    }
    std::string what = std::string("sandbox set-up: ") + to_string(stage);
    if (stage == ChildStage::kMount) what += ": " + (*prepared)->describe_mount(got->msg.step);
    return fail_errno(std::move(what), got->msg.error);
  }
  return sp;
}

void SandboxProcess::kill() const { (void)init_.signal(SIGKILL); }

Result<SandboxExit> SandboxProcess::finish(Clock::time_point until) {
  SandboxExit out;
  struct pollfd pfd{init_.pidfd(), POLLIN, 0};
  while (::poll(&pfd, 1, ms_until(until)) < 0 && errno == EINTR) {
  }
  if ((pfd.revents & POLLIN) == 0) kill();
  // Reaping the init returns only once every process of its PID namespace is gone: the
  // kernel's zap_pid_ns_processes waits for them before the init becomes a zombie.
  auto info = init_.wait();
  if (!info) return std::unexpected(info.error());
  out.init = *info;
  InitReport r;
  const ssize_t n = ::read(report_.get(), &r, sizeof(r));
  if (n == static_cast<ssize_t>(sizeof(r)) && r.magic == kInitReportMagic) out.report = r;
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
    proc::ExitInfo main;
    main.status = report->status;
    t.exited = main.exited();
    t.exit_code = main.exit_code();
    t.signal = main.signal();
    result.max_rss_kb = report->maxrss_kb;
    result.cpu_ms = report->children_cpu_us / 1000;
  } else if (!t.deadline_passed && !t.cancelled) {
    // The init died without reporting: something killed it from outside (the OOM killer,
    // an administrator); the code's own status is unknown.
    t.signal = exit_.init.signal();
  }
  t.oom_killed = stats.oom_killed;
  // A pids-limit hit explains a failure, never a success: ordinary code may probe fork
  // failures and still exit 0.
  const bool failed = !t.exited || t.exit_code != 0;
  if (failed && stats.pids_limit_hit) t.limit = LimitKind::kProcesses;
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
  if (!limits_) return {};
  if (auto st = limits_->remove(until); !st) {
    return fail(st.error().code, "remove limit groups: " + st.error().describe());
  }
  return {};
}

}  // namespace cordon::ns
