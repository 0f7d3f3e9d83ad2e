#include "contained_tree.h"

#include <poll.h>
#include <sys/resource.h>

#include <cerrno>

#include "cordon/proc/cgroup_fs.h"

namespace cordon::subprocess {
namespace {

Result<bool> wait_readable(int fd, Clock::time_point until) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    struct pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, left > 0 ? static_cast<int>(left) + 1 : 0);
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) return fail_errno("poll");
  }
}

}  // namespace

Result<ContainedTree> ContainedTree::start(proc::SpawnOptions code,
                                           std::optional<proc::Cgroup2> cgroup,
                                           const std::filesystem::path& helper,
                                           Clock::time_point until) {
  ContainedTree tree;
  if (cgroup) {
    // A reused cgroup's cpu.stat carries earlier runs: measure from here.
    tree.cpu_base_us_ = cgroup->cpu_usage_usec().value_or(0);
    code.cgroup_dir_fd = cgroup->dir_fd();
    code.cgroup_procs_fd = cgroup->procs_fd();
    auto child = proc::spawn(code);
    if (!child) return std::unexpected(child.error());
    tree.main_ = std::move(*child);
    tree.cgroup_ = std::move(cgroup);
    // Read after spawn() returned, so after the code's exec (CLONE_VFORK): an upper bound
    // of the peak that exec folded into the code's ru_maxrss.
    struct rusage self{};
    ::getrusage(RUSAGE_SELF, &self);
    tree.spawner_peak_kb_ = self.ru_maxrss;
    return tree;
  }
  auto reaper = proc::ReaperProcess::start(helper, code, until);
  if (!reaper) return std::unexpected(reaper.error());
  tree.reaper_.emplace(std::move(*reaper));
  return tree;
}

int ContainedTree::exit_fd() const { return reaper_ ? reaper_->exit_fd() : main_.pidfd(); }

void ContainedTree::kill() {
  if (reaper_) {
    reaper_->kill_tree();
    return;
  }
  // cgroup.kill reaches every member, however it detached itself; signal the main
  // process directly as well, in case the write fails (it then still dies). An empty
  // cgroup (the main process exited and left nothing behind) needs no kill: no process
  // can enter it but through us.
  if (cgroup_ && cgroup_->populated().value_or(true)) (void)cgroup_->kill();
  (void)main_.signal(SIGKILL);
}

Result<ContainedTree::Finish> ContainedTree::finish(Clock::time_point until) {
  Finish out;
  if (reaper_) {
    auto report = reaper_->finish(until);
    if (!report) return std::unexpected(report.error());
    out.main = report->main;
    out.cpu_us = report->tree_cpu_us;
    out.max_rss_kb = report->tree_max_rss_kb;
    return out;
  }
  // The main process was SIGKILLed or has exited; bound the wait anyway (a process in
  // uninterruptible sleep can take a while to die).
  auto dead = wait_readable(main_.pidfd(), until);
  if (!dead) return std::unexpected(dead.error());
  if (!*dead) return fail(ErrorCode::kTimeout, "the main process did not die after SIGKILL");
  auto info = main_.wait();
  if (!info) return std::unexpected(info.error());
  out.main = *info;
  // wait4's ru_maxrss covers the main process and the descendants it reaped: the largest
  // single process among them. Orphans killed by cgroup.kill are not counted. It is also
  // at least our own peak at the spawn (execve keeps the larger of the old and the new
  // memory's peaks, and the old memory was ours): only a figure above that is the code's.
  // (The helper path has no such floor: the code is forked there by the small helper.)
  if (info->usage.ru_maxrss > spawner_peak_kb_) out.max_rss_kb = info->usage.ru_maxrss;
  auto empty = cgroup_->wait_empty(until);
  if (!empty) return std::unexpected(empty.error());
  if (!*empty) return fail(ErrorCode::kTimeout, "processes of the run survived cgroup.kill");
  // cpu.stat counts every process that ever ran in the cgroup, orphans included.
  if (auto usec = cgroup_->cpu_usage_usec()) {
    out.cpu_us = *usec - cpu_base_us_;
  } else {
    out.cpu_us = info->usage.ru_utime.tv_sec * 1000000 + info->usage.ru_utime.tv_usec +
                 info->usage.ru_stime.tv_sec * 1000000 + info->usage.ru_stime.tv_usec;
  }
  return out;
}

Result<std::optional<proc::Cgroup2>> ContainedTree::take_cgroup(Clock::time_point until) {
  std::optional<proc::Cgroup2> cg = std::move(cgroup_);
  cgroup_.reset();
  if (!cg) return cg;
  if (!cg->ever_killed() && !cg->populated().value_or(true)) return cg;
  if (auto removed = cg->remove(until); !removed) return std::unexpected(removed.error());
  return std::optional<proc::Cgroup2>{};
}

Status SubprocessTree::finish(RunClock::time_point until) {
  auto finished = tree_.finish(until);
  if (!finished) return std::unexpected(finished.error());
  finish_ = *finished;
  auto cgroup = tree_.take_cgroup(until);
  if (!cgroup) {
    return fail(cgroup.error().code, "remove cgroup: " + cgroup.error().describe());
  }
  if (*cgroup) give_back_(std::move(**cgroup));
  return {};
}

Status SubprocessTree::describe_end(Termination& t, RunResult& result) {
  t.exited = finish_.main.exited();
  t.exit_code = finish_.main.exit_code();
  t.signal = finish_.main.signal();
  result.cpu_ms = finish_.cpu_us / 1000;
  result.max_rss_kb = finish_.max_rss_kb;
  return {};
}

Status SubprocessTree::teardown(RunClock::time_point until) {
  if (auto st = tmp_.remove(); !st) {
    return fail(st.error().code, "remove temp dir: " + st.error().describe());
  }
  // Only this backend holds its whole teardown to the bound (the driver bounds the
  // waits it makes itself).
  if (Clock::now() > until) return fail(ErrorCode::kTimeout, "teardown exceeded its bound");
  return {};
}

std::optional<ResourceSample> ContainedTree::usage() const {
  if (!cgroup_) return std::nullopt;
  const auto usec = cgroup_->cpu_usage_usec();
  return sample_of(proc::cgroupfs::memory_current(cgroup_->path(), /*v2=*/true),
                   usec ? std::optional<std::int64_t>(*usec) : std::nullopt, cpu_base_us_);
}

}  // namespace cordon::subprocess
