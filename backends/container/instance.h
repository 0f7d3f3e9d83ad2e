// The host objects of one backend instance, and the sweep of dead instances' leftovers.
//
// Under the runtime directory:
//   locks/<instance>.lock    flock'ed for as long as the instance lives
//   bundles/<instance>-<n>/  one per container: config.json, rootfs/, scratch/ (a tmpfs)
//   state/                   the runtime's --root (its per-container state)
// A container and its cgroup are named cordon-oci-<instance>-<n> (kContainerPrefix).
// <instance> is "<pid>-<k>", unique among live instances; the lock, not the pid, says
// whether the owner lives, so a recycled pid never makes a live instance's containers
// look stale, and several instances in one process sweep nothing of each other.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>

#include "cordon/error.h"
#include "cordon/proc/cgroup_layout.h"
#include "cordon/unique_fd.h"
#include "runtime_cli.h"

namespace cordon::oci {

inline constexpr const char* kContainerPrefix = "cordon-oci-";

class Instance {
 public:
  // Creates the directories (0700) and takes this instance's lock.
  [[nodiscard]] static Result<Instance> acquire(const std::filesystem::path& runtime_dir);
  // Why acquire() would fail to make or enter its directories, as far as can be seen
  // without making anything (the probe asks; empty: nothing seen): each is a directory
  // cordon can write, or does not exist yet in one it can.
  [[nodiscard]] static std::string unusable(const std::filesystem::path& runtime_dir);

  Instance() = default;
  Instance(Instance&&) noexcept;
  Instance& operator=(Instance&&) noexcept;
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  ~Instance();  // releases and removes the lock file

  [[nodiscard]] const std::string& id() const { return id_; }
  [[nodiscard]] std::filesystem::path bundles_dir() const { return dir_ / "bundles"; }
  [[nodiscard]] std::filesystem::path state_dir() const { return dir_ / "state"; }
  // A fresh "<instance>-<n>" for the next container.
  [[nodiscard]] std::string next_name();

 private:
  std::filesystem::path dir_;
  std::string id_;
  UniqueFd lock_;
  std::atomic<unsigned> counter_{0};
};

// Removes what instances whose lock is free (their process is gone) left behind: their
// containers (runtime kill + delete --force), cgroups, scratch mounts and bundles.
// Returns how many containers were swept.
// `on_dead` is told each dead instance's id first (engine mode removes its containers).
// Cgroups are found by name as well as through bundles: a cordon killed between making a
// container's groups and writing its bundle left groups and no bundle. An instance with
// no lock file is swept only while its pid does not run. `own_instance` is the caller's
// freshly acquired id, which has made nothing yet: what is under it is a dead namesake's.
[[nodiscard]] Result<int> sweep_dead_instances(
    const std::filesystem::path& runtime_dir, const RuntimeCli& runtime,
    const std::vector<proc::CgroupHierarchy>& hierarchies,
    const std::function<void(const std::string&)>& on_dead = {},
    const std::string& own_instance = {});

// Removes one container's leftovers by name: the runtime's container (unless
// `runtime_deleted`: an attached runtime's `run` that ended by itself deleted it), its
// cgroups and their parents, the scratch mount, the bundle directory.
[[nodiscard]] Status remove_container_leftovers(
    const std::filesystem::path& bundles_dir, const std::string& name, const RuntimeCli& runtime,
    const std::vector<proc::CgroupHierarchy>& hierarchies, Clock::time_point until,
    bool runtime_deleted = false);

}  // namespace cordon::oci
