// ContainerCgroups: mkdir, limits, the OOM eventfd, a few counters, rmdir.
#include "container_cgroups.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <thread>

#include "cordon/proc/cgroup_delegation.h"
#include "cordon/proc/cgroup_fs.h"
#include "cordon/proc/limit_group.h"
#include "cordon/text.h"

namespace cordon::oci {
namespace {

namespace fs = std::filesystem;

bool has(const proc::CgroupHierarchy& h, const std::string& controller) {
  for (const auto& c : h.controllers) {
    if (c == controller) return true;
  }
  return false;
}

}  // namespace

std::string ContainerCgroups::unavailable_reason(
    const std::vector<proc::CgroupHierarchy>& hierarchies) {
  std::string missing;
  for (const char* controller : {"memory", "pids"}) {
    bool v1 = false;
    for (const auto& h : hierarchies) v1 = v1 || (!h.v2 && has(h, controller));
    if (v1) continue;
    const auto* v2 = proc::find_v2_hierarchy(hierarchies);
    const auto offered = v2 != nullptr
                             ? proc::cgroupfs::read_small(v2->own_dir / "cgroup.controllers")
                             : Result<std::string>(std::string());
    if (!offered || !proc::cgroupfs::has_word(*offered, controller)) {
      missing += missing.empty() ? controller : std::string(" and ") + controller;
      continue;
    }
    auto parent = proc::v2_group_parent(*v2, "/sys/fs/cgroup", /*acquire=*/false);
    if (!parent) return "no cgroup for the memory and process limits: " + parent.error().describe();
  }
  if (missing.empty()) return {};
  return "no " + missing +
         " controller for cordon's groups (neither a cgroup v1 hierarchy nor "
         "available to our cgroup v2 group)";
}

Result<ContainerCgroups> ContainerCgroups::create(
    const std::vector<proc::CgroupHierarchy>& hierarchies, const std::string& group,
    std::uint64_t memory_bytes, std::uint64_t max_processes) {
  ContainerCgroups cg;
  cg.group_ = group;
  cg.hierarchies_ = hierarchies;
  bool memory = false;
  bool pids = false;
  // The limits as the limit groups write them (proc::write_group_limit): the init counts as
  // one process of the container.
  Limits limits;
  limits.memory_bytes = memory_bytes;
  limits.max_processes = max_processes + 1;
  for (const auto& h : hierarchies) {
    const bool mem_here = h.v2 ? false : has(h, "memory");
    const bool pids_here = h.v2 ? false : has(h, "pids");
    const bool cpu_here = !h.v2 && has(h, "cpuacct");
    if (!mem_here && !pids_here && !cpu_here && !h.v2) continue;
    if (h.v2) {
      // A pure v2 host hands controllers only from a parent without processes of its own:
      // the one cgroup_delegation.h finds (a delegated systemd scope, ...), with memory and
      // pids enabled for its children where our group is offered them. Where that fails the
      // group has no memory.max and the run is refused below, with the reason.
      auto parent = proc::v2_group_parent(h, "/sys/fs/cgroup", /*acquire=*/true);
      if (!parent) {
        remove_container_cgroups(hierarchies, group);
        return fail(ErrorCode::kUnavailable,
                    "no cgroup for the memory and process limits: " + parent.error().describe());
      }
      const auto offered = proc::cgroupfs::read_small(h.own_dir / "cgroup.controllers");
      for (const char* c : {"memory", "pids"}) {
        if (!offered || !proc::cgroupfs::has_word(*offered, c)) continue;
        if (auto st = proc::enable_v2_controller(parent->dir, c); !st) {
          remove_container_cgroups(hierarchies, group);
          return std::unexpected(st.error());
        }
      }
    }
    const fs::path dir = proc::group_parent_dir(h) / group;
    if (::mkdir(dir.c_str(), 0755) != 0) {
      remove_container_cgroups(hierarchies, group);
      return fail_errno("mkdir " + dir.string());
    }
    Status st;
    // A v2 tree without the controllers (a hybrid host's) has no memory.max: only the
    // counters are read there.
    const bool v2_memory = h.v2 && fs::exists(dir / "memory.max");
    const bool v2_pids = h.v2 && fs::exists(dir / "pids.max");
    if (mem_here || v2_memory) {
      auto applied = proc::write_group_limit(dir, h.v2, proc::LimitKindCg::kMemory, limits);
      st = applied ? Status() : Status(std::unexpected(applied.error()));
      if (st && mem_here) {
        // v1 OOM notification: "<eventfd> <fd of memory.oom_control>" to
        // cgroup.event_control; the eventfd counts OOM events of this group's subtree.
        UniqueFd efd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
        UniqueFd ofd(::open((dir / "memory.oom_control").c_str(), O_RDONLY | O_CLOEXEC));
        if (!efd || !ofd) {
          st = fail_errno("eventfd / memory.oom_control");
        } else {
          st = proc::cgroupfs::write(dir / "cgroup.event_control",
                                     std::to_string(efd.get()) + " " + std::to_string(ofd.get()));
          cg.oom_event_ = std::move(efd);
        }
      }
      memory = memory || st.has_value();
    }
    if (st && (pids_here || v2_pids)) {
      auto applied = proc::write_group_limit(dir, h.v2, proc::LimitKindCg::kProcesses, limits);
      st = applied ? Status() : Status(std::unexpected(applied.error()));
      pids = pids || st.has_value();
    }
    if (!st) {
      remove_container_cgroups(hierarchies, group);
      return std::unexpected(st.error());
    }
  }
  // CPU time is read where every process of the container is counted. On a hybrid host
  // that is the v1 cpuacct hierarchy: runc joins the controller-less v2 tree as well, but
  // runsc's sandbox joins only the v1 hierarchies (its v2 group stays empty and reads 0,
  // which used to overwrite the v1 figure). The v2 tree where no v1 cpuacct exists.
  for (std::size_t i = 0; i < hierarchies.size(); ++i) {
    const bool v1_cpuacct = !hierarchies[i].v2 && has(hierarchies[i], "cpuacct");
    if (v1_cpuacct || (hierarchies[i].v2 && cg.cpu_hierarchy_ < 0)) {
      cg.cpu_hierarchy_ = static_cast<int>(i);
    }
  }
  // Fail closed: an isolating backend never runs without both ceilings.
  if (!memory || !pids) {
    remove_container_cgroups(hierarchies, group);
    return fail(ErrorCode::kUnavailable, std::string("no cgroup for the ") +
                                             (!memory ? "memory" : "process") +
                                             " limit under cordon's own cgroup");
  }
  return cg;
}

bool ContainerCgroups::holds(pid_t pid) const {
  const std::string want = std::to_string(pid);
  for (const auto& h : hierarchies_) {
    const auto text =
        proc::cgroupfs::read(proc::group_parent_dir(h) / group_ / "c" / "cgroup.procs");
    if (!text) continue;
    for (const std::string_view line : split(*text, '\n')) {
      if (line == want) return true;
    }
  }
  return false;
}

Status ContainerCgroups::wait_empty(std::chrono::steady_clock::time_point until) const {
  // Every hierarchy the runtime made the container's group in lists the same processes;
  // an exited process leaves the list before its parent reaps it.
  for (const auto& h : hierarchies_) {
    const fs::path procs = proc::group_parent_dir(h) / group_ / "c" / "cgroup.procs";
    for (;;) {
      const auto text = proc::cgroupfs::read_small(procs);
      if (!text || text->empty()) break;
      if (std::chrono::steady_clock::now() >= until) {
        return fail(ErrorCode::kTimeout, "processes of the container did not exit");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (std::filesystem::exists(procs.parent_path())) return {};
  }
  return {};
}

ContainerStats ContainerCgroups::stats() const {
  namespace cgfs = proc::cgroupfs;
  ContainerStats s;
  if (oom_event_) {
    std::uint64_t count = 0;
    if (::read(oom_event_.get(), &count, sizeof(count)) == sizeof(count) && count > 0) {
      s.oom_killed = true;
    }
  }
  for (const auto& h : hierarchies_) {
    const fs::path dir = proc::group_parent_dir(h) / group_;
    // v1 has the OOM eventfd above (its memory.oom_control counts only this group, where
    // the container's own group below it is where the kill happens).
    if (h.v2 && cgfs::oom_killed(dir, true)) s.oom_killed = true;
    if (h.v2 || has(h, "pids")) {
      // The limit is on our group, the forks happen in the container's own below it
      // ("c"), where v1 and Linux before 6.10 count a refused fork: read both.
      for (const fs::path& d : {dir, dir / "c"}) s.pids_limit_hit |= cgfs::pids_max_hit(d);
    }
    if (h.v2 || has(h, "memory")) {
      if (auto bytes = cgfs::memory_peak(dir, h.v2)) s.memory_peak_kb = *bytes / 1024;
    }
  }
  if (auto usec = cpu_usec_now()) s.cpu_usec = std::max<std::int64_t>(0, *usec - cpu_base_usec_);
  return s;
}

std::optional<std::int64_t> ContainerCgroups::cpu_usec_now() const {
  if (cpu_hierarchy_ < 0) return std::nullopt;
  const auto& h = hierarchies_[static_cast<std::size_t>(cpu_hierarchy_)];
  return proc::cgroupfs::cpu_usec(proc::group_parent_dir(h) / group_, h.v2);
}

Status ContainerCgroups::make_own_pids_group() const {
  for (const auto& h : hierarchies_) {
    if (h.v2 || !has(h, "pids")) continue;
    const fs::path own = proc::group_parent_dir(h) / group_ / "c";
    if (::mkdir(own.c_str(), 0755) != 0 && errno != EEXIST)
      return fail_errno("mkdir " + own.string());
  }
  return {};
}

void ContainerCgroups::mark_run_start() { cpu_base_usec_ = cpu_usec_now().value_or(0); }

std::optional<ResourceSample> ContainerCgroups::usage() const {
  std::optional<std::int64_t> memory;
  for (const auto& h : hierarchies_) {
    if (h.v2 || has(h, "memory")) {
      if (auto bytes = proc::cgroupfs::memory_current(proc::group_parent_dir(h) / group_, h.v2)) {
        memory = bytes;
      }
    }
  }
  return sample_of(memory, cpu_usec_now(), cpu_base_usec_);
}

void remove_container_cgroups(const std::vector<proc::CgroupHierarchy>& hierarchies,
                              const std::string& group) {
  for (const auto& h : hierarchies) {
    ::rmdir((proc::group_parent_dir(h) / group / "c").c_str());
    ::rmdir((proc::group_parent_dir(h) / group).c_str());
  }
}

}  // namespace cordon::oci
