#include "cordon/proc/reaper.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "cordon/install_layout.h"
#include "cordon/proc/pipe.h"
#include "cordon/proc/reaper_protocol.h"

namespace cordon::proc {
namespace fs = std::filesystem;
namespace {

constexpr const char* kHelperName = "cordon-init";

// Waits until `fd` is readable or `until` passes.
Result<bool> wait_readable(int fd, ReaperProcess::Clock::time_point until) {
  for (;;) {
    const auto now = ReaperProcess::Clock::now();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
    struct pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, left > 0 ? static_cast<int>(left) + 1 : 0);
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) return fail_errno("poll");
  }
}

}  // namespace

std::optional<fs::path> find_reaper_helper() { return find_libexec_helper(kHelperName); }

Result<ReaperProcess> ReaperProcess::start(const fs::path& helper, const SpawnOptions& code,
                                           Clock::time_point until) {
  auto control = make_seqpacket_pair();
  if (!control) return std::unexpected(control.error());

  SpawnOptions opts;
  opts.path = helper.string();
  opts.argv = {helper.string(), "reaper", std::to_string(::getpid()), code.path,
               std::to_string(code.rlimits.size())};
  for (const auto& lim : code.rlimits) {
    opts.argv.push_back(std::to_string(lim.resource));
    opts.argv.push_back(std::to_string(lim.soft));
    opts.argv.push_back(std::to_string(lim.hard));
  }
  opts.argv.emplace_back("--");
  opts.argv.insert(opts.argv.end(), code.argv.begin(), code.argv.end());
  opts.env = code.env;  // the helper hands its own environment on to the code
  opts.cwd = code.cwd;
  opts.stdin_fd = code.stdin_fd;
  opts.stdout_fd = code.stdout_fd;
  opts.stderr_fd = code.stderr_fd;
  opts.keep_fds = {control->write.get()};  // becomes kReaperControlFd in the helper
  opts.new_session = true;

  auto child = spawn(opts);
  if (!child) return std::unexpected(child.error());
  control->write.reset();  // only the helper holds the other end now: EOF means it is gone

  ReaperProcess reaper;
  reaper.helper_ = std::move(*child);
  reaper.control_ = std::move(control->read);

  auto readable = wait_readable(reaper.control_.get(), until);
  if (!readable) return std::unexpected(readable.error());
  if (!*readable)
    return fail(ErrorCode::kTimeout, "the reaper helper did not start the code in time");
  init::Event msg;
  const ssize_t n = ::recv(reaper.control_.get(), &msg, sizeof(msg), 0);
  if (n != static_cast<ssize_t>(sizeof(msg))) {
    return fail(ErrorCode::kInternal, "the reaper helper exited before starting the code");
  }
  if (msg.kind == init::EventKind::kFailed) {
    std::string what = to_string(static_cast<SpawnStage>(msg.stage));
    if (static_cast<SpawnStage>(msg.stage) == SpawnStage::kExec) what += " " + code.path;
    return fail_errno(std::move(what), msg.error);
  }
  if (msg.kind != init::EventKind::kStarted) {
    return fail(ErrorCode::kInternal, "unexpected message from the reaper helper");
  }
  reaper.code_pid_ = msg.pid;
  return reaper;
}

void ReaperProcess::kill_tree() {
  if (!control_) return;
  // MSG_NOSIGNAL: the helper may already be gone; that must not SIGPIPE cordon.
  (void)::send(control_.get(), "K", 1, MSG_NOSIGNAL);
}

Result<ReaperProcess::Report> ReaperProcess::finish(Clock::time_point until) {
  if (helper_.reaped()) return fail(ErrorCode::kInternal, "reaper helper already finished");
  Report report;
  bool got_report = false;
  // The helper sends its Report and exits; read until EOF so an early exit is noticed.
  for (;;) {
    auto readable = wait_readable(control_.get(), until);
    if (!readable) return std::unexpected(readable.error());
    if (!*readable) {
      (void)helper_.signal(SIGKILL);
      (void)helper_.wait();
      return fail(ErrorCode::kTimeout, "the reaper helper did not finish killing the tree in time");
    }
    init::Report msg;
    const ssize_t n = ::recv(control_.get(), &msg, sizeof(msg), 0);
    // ECONNRESET: the helper closed its end with our "kill" byte still unread (it had
    // already finished). AF_UNIX reports that error once, *before* the queued messages,
    // so read on: the report is still there.
    if (n < 0 && (errno == EINTR || errno == ECONNRESET)) continue;
    if (n <= 0) break;  // EOF: the helper is exiting
    // Only a complete report: the main process's end, taken after the whole tree was
    // killed and reaped (init_end.h).
    if (n == static_cast<ssize_t>(sizeof(msg)) && init::is_complete(msg) && msg.main_reaped == 1) {
      got_report = true;
      report.main.status = msg.status;
      report.main.usage.ru_utime.tv_sec = msg.main_utime_us / 1000000;
      report.main.usage.ru_utime.tv_usec = msg.main_utime_us % 1000000;
      report.main.usage.ru_stime.tv_sec = msg.main_stime_us / 1000000;
      report.main.usage.ru_stime.tv_usec = msg.main_stime_us % 1000000;
      report.main.usage.ru_maxrss = msg.main_maxrss_kb;
      report.tree_cpu_us = msg.tree_cpu_us;
      report.tree_max_rss_kb = msg.tree_maxrss_kb;
    }
  }
  control_.reset();
  auto helper_exit = wait_readable(helper_.pidfd(), until);
  if (!helper_exit || !*helper_exit) (void)helper_.signal(SIGKILL);
  auto status = helper_.wait();
  if (!status) return std::unexpected(status.error());
  if (!got_report) {
    return fail(ErrorCode::kInternal,
                "the reaper helper ended without a report (killed by the code?); "
                "descendants of the code may have survived");
  }
  return report;
}

ReaperProcess::~ReaperProcess() {
  if (helper_.reaped()) return;
  control_.reset();
  (void)wait_readable(helper_.pidfd(), Clock::now() + std::chrono::seconds(2));
  // ~ChildProcess SIGKILLs (a no-op if it has exited) and reaps.
}

}  // namespace cordon::proc
