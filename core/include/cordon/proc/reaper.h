// The fallback when no cgroup can be had: a small helper process (cordon-reaper) that is
// the subreaper of the code's tree, so every orphan of the tree (a daemonised or setsid
// grandchild) is reparented to it and can be found and killed.
//
// Why a helper and not PR_SET_CHILD_SUBREAPER on cordon itself: cordon is a library that
// may live in a GUI or a server; a subreaper flag there would make that process inherit
// (and have to reap) orphans of unrelated children. The helper sets PR_SET_PDEATHSIG
// (SIGKILL) so it dies with cordon, and kills the tree when its control socket hits EOF.
// PR_SET_PDEATHSIG fires when the *thread* that spawned the helper exits, not the process:
// run() is synchronous, so that thread outlives the helper; never start the helper from a
// thread that may exit first (a thread pool's worker being retired).
//
// The helper starts the code, waits for it, and when the main process ends (or cordon asks,
// at the deadline or on cancel) kills every descendant: it walks /proc for processes whose
// parent chain leads to it, SIGKILLs them, reaps with wait4(-1), and repeats until ECHILD.
// It then reports the main process's status and the tree's CPU time and peak RSS, and exits.
// Unlike a cgroup, this does not hold against code that kills the helper itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>

#include "cordon/error.h"
#include "cordon/proc/spawn.h"
#include "cordon/unique_fd.h"

namespace cordon::proc {

// Where the helper binary is: $CORDON_LIBEXEC_DIR, else the libexec folder of the tree this
// libcordon-core belongs to (cordon/install_layout.h).
[[nodiscard]] std::optional<std::filesystem::path> find_reaper_helper();

class ReaperProcess {
 public:
  using Clock = std::chrono::steady_clock;

  struct Report {
    ExitInfo main;                 // status and rusage of the main process
    std::int64_t tree_cpu_us = 0;  // user + system of the whole tree
    std::int64_t tree_max_rss_kb = 0;
  };

  // Starts `helper`, which starts the code described by `code` (path, argv, env, cwd, stdio
  // fds, rlimits) as its own child. Returns once the helper reports the code started, or
  // fails with the code's spawn error; gives up (and kills the helper) at `until`.
  [[nodiscard]] static Result<ReaperProcess> start(const std::filesystem::path& helper,
                                                   const SpawnOptions& code,
                                                   Clock::time_point until);

  ReaperProcess() = default;
  ReaperProcess(ReaperProcess&&) noexcept = default;
  ReaperProcess& operator=(ReaperProcess&&) noexcept = delete;
  ReaperProcess(const ReaperProcess&) = delete;
  ReaperProcess& operator=(const ReaperProcess&) = delete;
  // Closes the control socket (the helper kills the tree on EOF) and gives the helper
  // up to 2 s to do so before SIGKILLing it: killing it first would orphan the tree.
  ~ReaperProcess();

  // Readable when the helper exited: it does so right after the code's main process
  // ended and the rest of the tree was killed. Poll it as the pump's exit fd.
  [[nodiscard]] int exit_fd() const { return helper_.pidfd(); }
  [[nodiscard]] pid_t code_pid() const { return code_pid_; }

  // Asks the helper to kill the whole tree now (deadline, cancel). Idempotent.
  void kill_tree();
  // Waits for the helper's report and exit; past `until` SIGKILLs the helper and fails.
  [[nodiscard]] Result<Report> finish(Clock::time_point until);

 private:
  ChildProcess helper_;
  UniqueFd control_;
  pid_t code_pid_ = -1;
};

}  // namespace cordon::proc
