// The code's process tree, contained one of two ways, behind one small interface so
// run() reads as a plain list of steps:
//  - a cgroup v2 of its own: the child joins it before exec; cgroup.kill ends the tree.
//  - the subreaper helper (cordon-reaper) when no cgroup can be had (or it is forced).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>

#include "cordon/error.h"
#include "cordon/proc/cgroup2.h"
#include "cordon/proc/reaper.h"
#include "cordon/proc/spawn.h"
#include "cordon/run_driver.h"
#include "cordon/temp_dir.h"

namespace cordon::subprocess {

using Clock = std::chrono::steady_clock;

class ContainedTree {
 public:
  struct Finish {
    proc::ExitInfo main;      // the main process's wait status and rusage
    std::int64_t cpu_us = 0;  // the whole tree
    // The largest single process; unset when the main process's figure cannot be told
    // apart from the spawner's own peak (see spawner_peak_kb_).
    std::optional<std::int64_t> max_rss_kb;
  };

  // Spawns `code` inside `cgroup` (joined before exec), or under the helper when
  // `cgroup` is empty. `until` bounds the helper's start-up.
  [[nodiscard]] static Result<ContainedTree> start(proc::SpawnOptions code,
                                                   std::optional<proc::Cgroup2> cgroup,
                                                   const std::filesystem::path& helper,
                                                   Clock::time_point until);

  // Readable once the main process has ended (its pidfd, or the helper's).
  [[nodiscard]] int exit_fd() const;
  // Contained by its cgroup (cgroup.kill), else by the helper.
  [[nodiscard]] bool in_cgroup() const { return cgroup_.has_value(); }

  // Kills every process of the tree now. Called at the deadline, on cancel, and after a
  // normal exit of the main process (nothing may outlive the run). A cgroup that is
  // already empty is left unkilled, so it can serve another run (see take_cgroup()).
  void kill();
  // After kill(): reaps the main process, waits for the tree to be gone and measures it.
  // Past `until` it gives up with kTimeout.
  [[nodiscard]] Result<Finish> finish(Clock::time_point until);
  // After a successful finish(): the cgroup, if it is empty and was never killed and so
  // may serve the next run; otherwise it is removed here (failing if that fails).
  // Empty on the helper path.
  [[nodiscard]] Result<std::optional<proc::Cgroup2>> take_cgroup(Clock::time_point until);
  // While running: the cgroup's memory.current and CPU use so far. None on the helper
  // path: it has no group to read, so nothing to measure.
  [[nodiscard]] std::optional<ResourceSample> usage() const;

 private:
  std::optional<proc::Cgroup2> cgroup_;
  std::int64_t cpu_base_us_ = 0;  // cpu.stat before this run (reused cgroup)
  // This process's peak RSS just after the code's exec (cgroup path). The code is
  // cloned from this process (CLONE_VM), and execve folds the peak of the memory it
  // leaves (ours) into the new program's ru_maxrss: a wait4 figure at or below this bound
  // may be ours, not the code's (an inspector of 120 MiB reported that for `id -u`).
  std::int64_t spawner_peak_kb_ = 0;
  proc::ChildProcess main_;                    // cgroup path
  std::optional<proc::ReaperProcess> reaper_;  // helper path
};

// A started ContainedTree and the run's temp dir, as the shared driver sees them
// (cordon/run_driver.h). finish() also hands an empty, never-killed cgroup back to the
// backend's idle pool (or removes it): that must happen before the outcome is decided,
// since a cgroup that cannot be removed is a sandbox error.
class SubprocessTree final : public StartedTree {
 public:
  using GiveBack = std::function<void(proc::Cgroup2)>;
  SubprocessTree(ContainedTree tree, TempDir tmp, std::filesystem::path work, GiveBack give_back)
      : tmp_(std::move(tmp)),
        work_(std::move(work)),
        tree_(std::move(tree)),
        give_back_(std::move(give_back)) {}

  [[nodiscard]] int exit_fd() const override { return tree_.exit_fd(); }
  void kill() override { tree_.kill(); }
  [[nodiscard]] Status finish(RunClock::time_point until) override;
  [[nodiscard]] Status describe_end(Termination& t, RunResult& result) override;
  [[nodiscard]] Result<std::filesystem::path> artifact_dir() override { return work_; }
  [[nodiscard]] Status teardown(RunClock::time_point until) override;
  [[nodiscard]] std::optional<ResourceSample> sample() const override { return tree_.usage(); }

 private:
  // Declared before tree_: the tree is killed and reaped before its temp dir goes.
  TempDir tmp_;
  std::filesystem::path work_;
  ContainedTree tree_;
  GiveBack give_back_;
  ContainedTree::Finish finish_;
};

}  // namespace cordon::subprocess
