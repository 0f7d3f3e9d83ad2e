// A cgroup v2 per run: the one reliable way to find and kill every process the code
// started, including descendants that called setsid or daemonised (a process-group kill
// misses those). Needs only the controller-less core files: cgroup.procs, cgroup.kill
// (Linux 5.14), cgroup.events and cpu.stat, which also work on a hybrid host's empty
// /sys/fs/cgroup/unified tree.
//
// Cgroups are created only under the calling process's own v2 cgroup, named
// cordon-<our pid>-<counter> (make_run_cgroup_dir), so a sweep can tell cordon's apart from
// anyone else's; whether a group's owner still lives is told by the flock its owner holds on
// the group's directory, not by the pid in the name (see sweep_unowned_cgroups).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/error.h"
#include "cordon/unique_fd.h"

namespace cordon::proc {

// <cgroup2 mount>/<our own v2 path>: where this process may create its run cgroups.
[[nodiscard]] Result<std::filesystem::path> own_cgroup2_dir();

// A run cgroup's directory and its owner's lock: an fd of the directory holding
// flock(LOCK_EX) for as long as the group is ours. The lock goes when every copy of the fd
// is closed (the owner's exit, however it dies; O_CLOEXEC, so no exec'd child keeps it).
struct RunCgroupDir {
  std::filesystem::path path;
  UniqueFd lock;
};

// mkdir <parent>/cordon-<our pid>-<n> and its lock: the one way every per-run cgroup is made
// (Cgroup2 and LimitGroup), with next_owned_name's process-wide counter. A name that exists
// already is skipped: a dead process that had our pid left it and the sweep has not
// removed it yet. The mkdir and the lock are one step for a sweep: both happen under a
// shared flock of `parent`, which a sweep holds exclusively while it decides.
[[nodiscard]] Result<RunCgroupDir> make_run_cgroup_dir(const std::filesystem::path& parent);

// Whether a cgroup made under `parent` will have cgroup.kill (Linux >= 5.14), which
// Cgroup2::create requires, read without making one: a non-root cgroup (it has
// cgroup.type) shows cgroup.kill where the kernel has it; the root has none of its own,
// so there the kernel's release ("6.1.0-18-amd64") decides. What a backend claims for
// its timeout follows this (claims.h): never cgroup.kill where runs would fall back.
[[nodiscard]] bool cgroup_kill_expected(const std::filesystem::path& parent,
                                        std::string_view kernel_release);
[[nodiscard]] bool cgroup_kill_expected(const std::filesystem::path& parent);  // uname's

// The owner pid encoded in a name made by make_run_cgroup_dir ("cordon-123-4" -> 123).
[[nodiscard]] std::optional<pid_t> cgroup_owner_pid(std::string_view name);

class Cgroup2 {
 public:
  using Clock = std::chrono::steady_clock;

  // mkdir <parent>/cordon-<pid>-<n>. Fails (kUnavailable / kSystem) when there is no
  // usable v2 tree or no permission: the caller falls back.
  [[nodiscard]] static Result<Cgroup2> create(const std::filesystem::path& parent);
  // Adopts an existing directory (for the sweep).
  [[nodiscard]] static Result<Cgroup2> adopt(const std::filesystem::path& dir);

  Cgroup2() = default;
  Cgroup2(Cgroup2&& other) noexcept;
  Cgroup2& operator=(Cgroup2&& other) noexcept;
  Cgroup2(const Cgroup2&) = delete;
  Cgroup2& operator=(const Cgroup2&) = delete;
  // Kills what is left, waits (bounded, 2 s) and removes the directory, silently.
  ~Cgroup2();

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // An open cgroup.procs: spawn() writes "0" to it in the child before exec.
  [[nodiscard]] int procs_fd() const { return procs_.get(); }
  // The cgroup's directory: spawn() starts the child directly inside it with clone3's
  // CLONE_INTO_CGROUP where it can (no migration, see spawn.h). -1 if it could not be opened.
  [[nodiscard]] int dir_fd() const { return dir_.get(); }

  // Writes "1" to cgroup.kill: SIGKILL to every process in the cgroup and below, atomically
  // with respect to forks (the kernel stops new members while it kills).
  [[nodiscard]] Status kill() const;
  // Whether any process is in the cgroup now (cgroup.events "populated").
  [[nodiscard]] Result<bool> populated() const;
  // Whether kill() was ever called. A killed cgroup must not be reused: on Linux 6.x a
  // child later started in it with CLONE_INTO_CGROUP is SIGKILLed at birth (the fork
  // compares kill sequence numbers of the parent's and the target cgroup; seen here).
  [[nodiscard]] bool ever_killed() const { return ever_killed_; }

  // Waits until cgroup.events says "populated 0" or `until` passes; returns whether empty.
  [[nodiscard]] Result<bool> wait_empty(Clock::time_point until) const;
  // usage_usec from cpu.stat: CPU time of every process that ever ran in it.
  [[nodiscard]] Result<std::int64_t> cpu_usage_usec() const;
  // kill(), wait_empty(until), then rmdir of any child cgroups (the code may make some
  // when it runs as root) and of this one.
  [[nodiscard]] Status remove(Clock::time_point until);

 private:
  explicit Cgroup2(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
  mutable bool ever_killed_ = false;
  UniqueFd dir_;
  UniqueFd procs_;
};

// mkdir `dir` (one that exists is taken as it is) and lock it as make_run_cgroup_dir does,
// under its parent's shared lock: cordon's own leaf on a delegated v2 parent
// (cgroup_delegation.h, "cordon-<pid>-0"), which lies beside the run groups and which a sweep
// must never take for a dead run's group. Fails when someone else holds its lock.
[[nodiscard]] Result<UniqueFd> make_locked_cgroup_dir(const std::filesystem::path& dir);

// Calls `remove` for every group named cordon-<pid>-<n> under `parent` whose lock
// (RunCgroupDir) no one holds, holding that lock meanwhile so no other sweep takes it too;
// returns how many `remove` said it removed. A group whose directory cannot be opened or
// locked (fd exhaustion, a permission) stays: ownership is decided by the lock alone, never
// by a failed open of the owner's /proc entry, which also fails for a live owner under
// hidepid or in another PID namespace sharing this cgroupfs. A group made by a cordon that
// took no such lock (before #40) reads as unowned.
[[nodiscard]] Result<int> sweep_unowned_cgroups(
    const std::filesystem::path& parent,
    const std::function<bool(const std::filesystem::path&)>& remove);

// sweep_unowned_cgroups with Cgroup2's removal: kills what runs in each, then rmdir. Ours and
// those of live cordons stay. Returns how many were removed.
[[nodiscard]] Result<int> sweep_stale_cgroups(const std::filesystem::path& parent);

}  // namespace cordon::proc
