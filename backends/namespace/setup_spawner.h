// cordon-ns-spawner's cordon side. The set-up process of a sandbox (child_setup.h) is
// cloned without CLONE_VM, so cloning it from cordon copies cordon's page tables and
// write-protects its memory until the set-up process execs the init: in a long-lived,
// multi-threaded cordon (`cordon mcp` with its warm pools) that was about a fifth of the
// CPU of every call (docs/ARCHITECTURE.md, "Speed of the namespace backend"). A small
// static single-threaded helper, started once, clones the set-up processes instead, from
// the plan sent as data (child_plan_wire.h), with CLONE_PARENT: each set-up process is
// still cordon's child, which waits for it through the pidfd the helper hands back, and
// whose thread its parent-death signal follows. What the set-up process does is the same
// code either way (sandbox_child_main); only its parent's memory differs, and it now holds
// a copy of the helper's (the one plan) instead of cordon's (every run's data).
//
// The helper is started by a thread of its own (keeper_thread.h), which lives as long as
// this object: PR_SET_PDEATHSIG follows the creating *thread*, and the set-up processes and
// the helper would otherwise die with whichever thread happened to build first.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>

#include "child_setup.h"
#include "cordon/error.h"
#include "cordon/proc/spawn.h"
#include "cordon/unique_fd.h"
#include "keeper_thread.h"

namespace cordon::ns {

class SetupSpawner {
 public:
  // Starts the helper at `exe` (cordon-ns-spawner) and returns once it runs.
  [[nodiscard]] static Result<std::unique_ptr<SetupSpawner>> start(
      const std::filesystem::path& exe);
  // Closes the socket (the helper ends on EOF), then ends and reaps the helper.
  ~SetupSpawner();
  SetupSpawner(const SetupSpawner&) = delete;
  SetupSpawner& operator=(const SetupSpawner&) = delete;

  struct Spawned {
    pid_t pid = -1;
    UniqueFd pidfd;
  };
  // Has the helper clone the set-up process of `plan` into `clone_flags`' namespaces. The
  // plan's fds are ours and stay ours (the helper gets copies and closes them). A failed
  // clone fails with its errno, as a clone of our own would; kUnavailable: the helper is
  // gone (alive() is then false).
  [[nodiscard]] Result<Spawned> clone_setup(const ChildPlan& plan, std::uint64_t clone_flags);
  // False once the helper stopped answering.
  [[nodiscard]] bool alive() const;
  // The helper's pid (tests).
  [[nodiscard]] pid_t helper_pid() const { return helper_pid_; }

 private:
  SetupSpawner() = default;

  // First: it ends last, once the helper is reaped.
  KeeperThread keeper_;
  mutable std::mutex mutex_;  // one request at a time on the socket; guards broken_
  UniqueFd socket_;
  bool broken_ = false;
  proc::ChildProcess helper_;
  pid_t helper_pid_ = -1;
};

// Where cordon-ns-spawner is: as find_ns_init().
[[nodiscard]] std::optional<std::filesystem::path> find_ns_spawner();

}  // namespace cordon::ns
