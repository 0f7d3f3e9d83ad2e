// Resource ceilings for one run through cgroups: memory, number of processes, CPU.
//
// Works on a pure cgroup v2 host (controllers enabled for our subtree: memory.max,
// pids.max, cpu.max) and on a v1/hybrid host like this machine kind (separate v1
// hierarchies memory, pids, cpu/cpuacct). Groups are created only under the caller's
// own cgroup in each hierarchy (never at a hierarchy's root unless that *is* our own
// cgroup), named cordon-<pid>-<n> so a later start can sweep those of a dead cordon.
//
// What could not be had is reported, not hidden: `enforced()` says, per limit, the
// mechanism actually in force, and a limit without a cgroup is left for the caller to
// fall back to an rlimit (and say so). On v1 the OOM count lives in the child group
// (memory.oom_control oom_kill) and is lost when the group is removed: read it first.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/observer.h"
#include "cordon/proc/cgroup_fs.h"
#include "cordon/request.h"
#include "cordon/unique_fd.h"

namespace cordon::proc {

enum class LimitKindCg { kMemory, kProcesses, kCpu };

struct LimitApplied {
  LimitKindCg kind = LimitKindCg::kMemory;
  std::string mechanism;  // "cgroup v1 memory.limit_in_bytes", "cgroup v2 pids.max", ...
  std::string value;      // "256 MiB", "64", "1 CPU"
  std::string detail;     // what it bounds: "RAM and swap together (...)", ...
};

struct LimitGroupStats {
  bool oom_killed = false;                     // the kernel OOM-killed a process of the group
  bool pids_limit_hit = false;                 // a fork/clone failed at pids.max
  std::optional<std::int64_t> memory_peak_kb;  // whole-group peak
  std::optional<std::int64_t> cpu_usec;        // whole-group CPU time
};

// Options beyond the request's limits.
struct LimitGroupOptions {
  // CPU bandwidth in CPUs (cpu.max / cpu.cfs_quota_us); unset: no CPU bandwidth limit.
  std::optional<double> cpus;
  // Where cgroup filesystems are mounted (tests point this elsewhere).
  std::filesystem::path cgroup_root = "/sys/fs/cgroup";
};

class LimitGroup {
 public:
  using Clock = std::chrono::steady_clock;

  // Creates the groups needed for `limits` (memory_bytes, max_processes) and options.cpus,
  // limits written before anything can join. On v1 with a CPU limit a cpuacct group is
  // added for stats().cpu_usec. Thread-safe; the cgroup layout is discovered once per
  // cgroup_root and process (again if our own cgroup has vanished).
  // Never fails for lack of cgroups: a limit that could not be placed is simply absent
  // from enforced(); fails only on an unexpected error after a group was made.
  [[nodiscard]] static Result<LimitGroup> create(const Limits& limits,
                                                 const LimitGroupOptions& options = {});

  LimitGroup() = default;
  LimitGroup(LimitGroup&&) noexcept;
  LimitGroup& operator=(LimitGroup&&) noexcept;
  LimitGroup(const LimitGroup&) = delete;
  LimitGroup& operator=(const LimitGroup&) = delete;
  ~LimitGroup();  // kills what is left, waits (bounded) and removes every group

  [[nodiscard]] const std::vector<LimitApplied>& enforced() const { return enforced_; }
  [[nodiscard]] bool has(LimitKindCg kind) const;

  // Moves `pid` (and the threads of it) into every group, from the parent side; call
  // before the child execs the code (e.g. while it waits on a pipe): v1 does not move
  // memory already charged, so only what is allocated after the join counts.
  // include_v1=false: the v2 groups only (the v1 ones joined through self_join_fds()).
  [[nodiscard]] Status join(pid_t pid, bool include_v1 = true) const;
  // The `tasks` file of every cgroup v1 group, opened here (the kernel checks the opener's
  // credentials) for a single-threaded child to write "0" to, placing itself. Why: a pid
  // written to cgroup.procs takes the kernel's global threadgroup lock, whose first use
  // after idle waits an RCU grace period (~10 ms on this machine kind); a thread moving
  // itself through `tasks` skips that lock. Pair with join(pid, /*include_v1=*/false).
  [[nodiscard]] Result<std::vector<UniqueFd>> self_join_fds() const;
  // On a pure v2 host, the group's directory for clone3 CLONE_INTO_CGROUP; else -1.
  [[nodiscard]] int v2_dir_fd() const;

  // Reads the OOM flag, pids-limit hits, peaks: call after the run, before removal.
  [[nodiscard]] LimitGroupStats stats() const;
  // Memory charged and CPU used now, while the code runs (memory.current or
  // memory.usage_in_bytes; cpu.stat or cpuacct.usage): unset where no group measures it,
  // and nullopt when none measures anything. A few small reads; never blocks.
  [[nodiscard]] std::optional<ResourceSample> usage() const;

  // Kills every process in the groups (v2 cgroup.kill; v1 by signalling each member of
  // cgroup.procs until empty), waits until empty or `until`, removes the groups. When the
  // processes are already gone this is one rmdir per group. Groups that could not be
  // removed stay owned (the destructor tries again); enforced() is cleared.
  [[nodiscard]] Status remove(Clock::time_point until);

  // What create() would put in enforced() for `kind` on this host (mechanism and detail;
  // no value), without making a group; nullopt where unavailable_reason() is not empty.
  // For capabilities(): a backend's claim and a run's `enforced` then read the same.
  [[nodiscard]] static std::optional<LimitApplied> planned(LimitKindCg kind,
                                                           const LimitGroupOptions& options = {});

  // Why each limit kind could not be placed here (for probe() and capabilities()).
  // Empty string = available.
  [[nodiscard]] static std::string unavailable_reason(LimitKindCg kind,
                                                      const LimitGroupOptions& options = {});

 private:
  struct Group {
    std::filesystem::path dir;
    bool v2 = false;
    unsigned roles = 0;  // bit set of what this group's directory is read for (limit_group.cpp)
    // The files stats() reads, opened when the group was made (cgroupfs::read_again): a
    // pooled sandbox's run then reads its figures without a path lookup or an open.
    std::vector<std::pair<cgroupfs::Figure, UniqueFd>> figures;
    UniqueFd lock;  // RunCgroupDir's: held until the group is removed (sweep_unowned_cgroups)
  };
  static void open_figures(Group& group);
  // A figure of `group`: from its file opened ahead, else by path (a file absent then).
  [[nodiscard]] static std::optional<std::int64_t> figure(const Group& group,
                                                          cgroupfs::Figure which);
  std::vector<Group> groups_;
  std::vector<LimitApplied> enforced_;
  UniqueFd v2_dir_;
};

// Writes the limit of `kind` (limits.memory_bytes, limits.max_processes or options.cpus)
// into the fresh group `dir` of a v1 hierarchy or the v2 tree, before anything joins it, and
// says how it is held: the one place cordon's limit files are written, for LimitGroup and
// for the container backend's parent groups (v2: memory.swap.max 0 where swap is
// accounted; v1: memory+swap capped too where accounted, and the OOM killer's pause off).
[[nodiscard]] Result<LimitApplied> write_group_limit(const std::filesystem::path& dir, bool v2,
                                                     LimitKindCg kind, const Limits& limits,
                                                     const LimitGroupOptions& options = {});

// Removes cordon-<pid>-* groups whose owner holds no lock on them (sweep_unowned_cgroups) in
// every hierarchy under our own cgroups.
[[nodiscard]] Result<int> sweep_stale_limit_groups(const LimitGroupOptions& options = {});

// Removes the cgroup `dir` and the groups below it, SIGKILLing whatever still runs in them
// (v2: cgroup.kill; v1: every member, round after round) until they can go or `until`.
// Gone already is success. For groups whose owner is gone: the sweeps of dead cordons'
// groups, here and in the backends.
[[nodiscard]] Status kill_and_remove_group(const std::filesystem::path& dir, bool v2,
                                           std::chrono::steady_clock::time_point until);

}  // namespace cordon::proc
