#include "cordon/proc/limit_group.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <csignal>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "cordon/proc/cgroup2.h"
#include "cordon/proc/cgroup_delegation.h"
#include "cordon/proc/cgroup_fs.h"
#include "cordon/proc/cgroup_layout.h"
#include "cordon/units.h"

namespace cordon::proc {
namespace fs = std::filesystem;
namespace {

using Clock = LimitGroup::Clock;

// What a group's directory is read for in stats() (Group::roles).
enum Role : unsigned {
  kRoleMemory = 1U << 0,
  kRolePids = 1U << 1,
  kRoleCpu = 1U << 2,
  kRoleCpuacct = 1U << 3,
};

// The CFS period we ask for: the kernel's default, 100 ms.
constexpr std::int64_t kCpuPeriodUsec = 100'000;

const char* controller_of(LimitKindCg kind) {
  switch (kind) {
    case LimitKindCg::kMemory:
      return "memory";
    case LimitKindCg::kProcesses:
      return "pids";
    case LimitKindCg::kCpu:
      return "cpu";
  }
  return "?";
}

unsigned role_of(LimitKindCg kind) {
  switch (kind) {
    case LimitKindCg::kMemory:
      return kRoleMemory;
    case LimitKindCg::kProcesses:
      return kRolePids;
    case LimitKindCg::kCpu:
      return kRoleCpu;
  }
  return 0;
}

std::string errno_text(int err) { return std::strerror(err); }

// Where a kind's group goes: the parent directory (our own cgroup in that hierarchy, or on
// v2 the parent cgroup_delegation.h finds), and for a v2 parent still to be made (a
// prediction) a directory to read its files from instead.
struct Site {
  fs::path parent;
  bool v2 = false;
  std::string via;     // how a v2 parent was had, in words ("" for our own cgroup)
  fs::path probe_dir;  // where planned() reads what the parent will offer
};

// A v2 parent can give `controller` to a child only when it is enabled in its
// cgroup.subtree_control, which v2 allows only in a group without processes (the root
// excepted). v2_group_parent() finds or predicts such a parent (a delegated systemd scope,
// or our own group with its processes moved to a leaf); `enable` acquires it and enables the
// controller there, a probe (enable=false) changes nothing.
Result<Site> locate_v2(const CgroupHierarchy& h, const fs::path& cgroup_root,
                       const char* controller, bool enable) {
  auto parent = v2_group_parent(h, cgroup_root, enable);
  if (!parent) {
    return fail(ErrorCode::kUnavailable, std::string(controller) +
                                             " is not enabled for cordon's groups and cannot "
                                             "be: " +
                                             parent.error().describe());
  }
  if (parent->dir.empty()) return Site{{}, true, parent->via, h.own_dir};  // a scope to come
  if (enable) {
    if (auto st = enable_v2_controller(parent->dir, controller); !st) {
      return std::unexpected(st.error());
    }
  }
  return Site{parent->dir, true, parent->via, parent->dir};
}

// Where `kind` can be placed. A controller is either in a v1 hierarchy or available to the
// v2 tree, never both, so the order of the checks only matters for the message.
Result<Site> locate(LimitKindCg kind, const std::vector<CgroupHierarchy>& hierarchies,
                    const fs::path& cgroup_root, bool enable) {
  const char* controller = controller_of(kind);
  if (const auto* v1 = find_v1_hierarchy(hierarchies, controller)) {
    return Site{v1->own_dir, false, "", v1->own_dir};
  }
  const auto* v2 = find_v2_hierarchy(hierarchies);
  if (v2 != nullptr) {
    // Our cgroup.controllers lists what our parent gives us, i.e. what we could hand on.
    const auto available = cgroupfs::read_small(v2->own_dir / "cgroup.controllers");
    if (available && cgroupfs::has_word(*available, controller)) {
      return locate_v2(*v2, cgroup_root, controller, enable);
    }
  }
  return fail(ErrorCode::kUnavailable,
              std::string("no ") + controller + " controller mounted under " +
                  cgroup_root.string() +
                  (v2 != nullptr ? " (not a cgroup v1 hierarchy, and not available in " +
                                       (v2->own_dir / "cgroup.controllers").string() + ")"
                                 : ""));
}

std::string format_cpus(double cpus) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), cpus);
  return ec == std::errc() ? std::string(buf, end) + " CPU" : "? CPU";
}

// How a limit of `kind` is put in force, in words: the files written and what they bound.
// The one place these words come from, for a group made (create(), enforced()) and for
// one predicted (planned(), a backend's capabilities()). `swap_accounted`: the kernel
// accounts swap (memory.memsw.* on v1, memory.swap.* on v2 exist); memory only.
LimitApplied describe(LimitKindCg kind, bool v2, bool swap_accounted) {
  const std::string version = v2 ? "cgroup v2 " : "cgroup v1 ";
  LimitApplied a;
  a.kind = kind;
  switch (kind) {
    case LimitKindCg::kMemory:
      if (v2) {
        a.mechanism = version + "memory.max" + (swap_accounted ? " + memory.swap.max=0" : "");
        a.detail = swap_accounted ? "RAM, with no swap to extend into (memory.swap.max 0)"
                                  : "RAM only: this kernel accounts no swap";
      } else {
        a.mechanism = version + "memory.limit_in_bytes" +
                      (swap_accounted ? " + memory.memsw.limit_in_bytes" : " (no swap accounting)");
        a.detail = swap_accounted
                       ? "RAM and swap together (memory+swap capped at the same value), so swap "
                         "cannot extend it"
                       : "RAM only: this kernel accounts no swap";
      }
      break;
    case LimitKindCg::kProcesses:
      a.mechanism = version + "pids.max";
      a.detail = "processes and threads together";
      break;
    case LimitKindCg::kCpu:
      a.mechanism = version + (v2 ? "cpu.max" : "cpu.cfs_quota_us");
      a.detail = "CPU bandwidth";
      break;
  }
  return a;
}

// Where the group of a claim or of a run is, when that is not simply below our own cgroup
// (the same words for both, like describe()).
LimitApplied placed_in(LimitApplied a, const std::string& via) {
  if (!via.empty()) a.detail += "; the group is in " + via;
  return a;
}

}  // namespace

// Writes the limit of `kind` into a fresh group. On v1 everything is written BEFORE any
// process joins: a process joining a group without its limits could grow past them first.
Result<LimitApplied> write_group_limit(const fs::path& dir, bool v2, LimitKindCg kind,
                                       const Limits& limits, const LimitGroupOptions& options) {
  std::string value;  // set by each case before it writes
  const auto with_value = [&value](LimitApplied applied) {
    applied.value = value;
    return applied;
  };
  switch (kind) {
    case LimitKindCg::kMemory: {
      const std::string bytes = std::to_string(*limits.memory_bytes);
      value = format_size(*limits.memory_bytes);
      if (v2) {
        if (auto st = cgroupfs::write(dir / "memory.max", bytes); !st)
          return std::unexpected(st.error());
        // memory.max bounds RAM only; without swap.max 0 the group could page out and
        // keep growing. ENOENT: no swap accounting, so no swap to extend into.
        auto swap = cgroupfs::write(dir / "memory.swap.max", "0");
        if (!swap && swap.error().sys_errno != ENOENT) return std::unexpected(swap.error());
        return with_value(describe(kind, v2, swap.has_value()));
      }
      // limit_in_bytes first: the kernel keeps memsw.limit_in_bytes >= limit_in_bytes, and
      // both start at "unlimited", so memsw first would be refused (EINVAL).
      if (auto st = cgroupfs::write(dir / "memory.limit_in_bytes", bytes); !st) {
        return std::unexpected(st.error());
      }
      // The same value for memory+swap, so swap cannot extend the limit. ENOENT: the kernel
      // does no swap accounting (swapaccount=0); the limit then bounds RAM only, and the
      // mechanism says so.
      auto memsw = cgroupfs::write(dir / "memory.memsw.limit_in_bytes", bytes);
      if (!memsw && memsw.error().sys_errno != ENOENT) return std::unexpected(memsw.error());
      // A new v1 memory group inherits oom_kill_disable from its parent; 0 makes the kernel
      // OOM-kill inside the group instead of pausing it at the limit.
      if (auto st = cgroupfs::write(dir / "memory.oom_control", "0"); !st) {
        return std::unexpected(st.error());
      }
      return with_value(describe(kind, v2, memsw.has_value()));
    }
    case LimitKindCg::kProcesses: {
      const std::string n = std::to_string(*limits.max_processes);
      value = n;
      if (auto st = cgroupfs::write(dir / "pids.max", n); !st) return std::unexpected(st.error());
      return with_value(describe(kind, v2, false));
    }
    case LimitKindCg::kCpu: {
      // The kernel refuses quotas under 1 ms.
      const auto quota = std::max<std::int64_t>(
          1000, std::llround(*options.cpus * static_cast<double>(kCpuPeriodUsec)));
      value = format_cpus(*options.cpus);
      if (v2) {
        const auto text = std::to_string(quota) + " " + std::to_string(kCpuPeriodUsec);
        if (auto st = cgroupfs::write(dir / "cpu.max", text); !st)
          return std::unexpected(st.error());
        return with_value(describe(kind, v2, false));
      }
      // Period before quota: the quota is a share of the period.
      if (auto st = cgroupfs::write(dir / "cpu.cfs_period_us", std::to_string(kCpuPeriodUsec));
          !st) {
        return std::unexpected(st.error());
      }
      if (auto st = cgroupfs::write(dir / "cpu.cfs_quota_us", std::to_string(quota)); !st) {
        return std::unexpected(st.error());
      }
      return with_value(describe(kind, v2, false));
    }
  }
  return fail(ErrorCode::kInternal, "unknown limit kind");
}

namespace {

// The pids in `dir` and in any groups below it (a v1 process in a child group is not listed
// in the parent's cgroup.procs).
void collect_members(const fs::path& dir, std::vector<pid_t>& out) {
  if (auto text = cgroupfs::read(dir / "cgroup.procs")) {
    std::size_t start = 0;
    while (start < text->size()) {
      std::size_t end = text->find('\n', start);
      if (end == std::string::npos) end = text->size();
      pid_t pid = 0;
      if (std::from_chars(text->data() + start, text->data() + end, pid).ec == std::errc() &&
          pid > 0) {
        out.push_back(pid);
      }
      start = end + 1;
    }
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec) && !entry.is_symlink(ec)) collect_members(entry.path(), out);
  }
}

// v1 has no cgroup.kill: SIGKILL every member, again and again, until the group can go.
// A process forking meanwhile adds members the next round finds; pids.max bounds a fork
// bomb. A pid read from cgroup.procs could in theory exit and be reused before kill();
// that needs a full pid wrap-around within microseconds.
Status remove_v1_group(const fs::path& dir, Clock::time_point until) {
  std::vector<pid_t> members;
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    members.clear();
    collect_members(dir, members);
    for (const pid_t pid : members) ::kill(pid, SIGKILL);
    // Members leave cgroup.procs as they exit, but rmdir can still see the group populated
    // for a moment (a leader listed as gone while its threads finish exiting): retry.
    if (members.empty()) {
      auto removed = cgroupfs::remove_tree(dir);
      if (removed) return {};
      if (removed.error().sys_errno != EBUSY) return removed;
    }
    if (Clock::now() >= until) {
      return fail(ErrorCode::kTimeout, "processes of " + dir.string() + " did not exit");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(10'000));
  }
}

}  // namespace

Status kill_and_remove_group(const fs::path& dir, bool v2, Clock::time_point until) {
  // The common case: the backend has already killed and reaped everything, and one rmdir
  // is all it takes.
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return {};
  if (errno != EBUSY) return fail_errno("rmdir " + dir.string());
  if (v2) {
    auto cg = Cgroup2::adopt(dir);  // cgroup.kill, wait for "populated 0", rmdir the tree
    if (!cg) return std::unexpected(cg.error());
    return cg->remove(until);
  }
  return remove_v1_group(dir, until);
}

namespace {

// Discovery reads and parses /proc/self/mountinfo and /proc/self/cgroup: ~70 us of
// syscalls alone, as much as a memory group's mkdir. Mounts and our own cgroups do not
// change under a running cordon in practice, so the result is kept per cgroup_root;
// `refresh` re-reads (used when a mkdir finds our own cgroup gone, and by the sweep).
using Hierarchies = std::vector<CgroupHierarchy>;
Result<std::shared_ptr<const Hierarchies>> hierarchies_for(const fs::path& cgroup_root,
                                                           bool refresh) {
  // Never destroyed: a warm pool's build still in progress at exit reads it (warm_pool.h).
  static std::mutex mutex;
  static auto& cache = *new std::map<fs::path, std::shared_ptr<const Hierarchies>>;
  std::lock_guard lock(mutex);
  auto& slot = cache[cgroup_root];
  if (!slot || refresh) {
    auto found = discover_cgroup_hierarchies(cgroup_root);
    if (!found) return std::unexpected(found.error());
    slot = std::make_shared<const Hierarchies>(std::move(*found));
  }
  return slot;
}

bool is_limit_controller(const CgroupHierarchy& h) {
  for (const auto& c : h.controllers) {
    if (c == "memory" || c == "pids" || c == "cpu" || c == "cpuacct") return true;
  }
  return false;
}

}  // namespace

Result<LimitGroup> LimitGroup::create(const Limits& limits, const LimitGroupOptions& options) {
  LimitGroup group;
  std::vector<LimitKindCg> kinds;
  if (limits.memory_bytes) kinds.push_back(LimitKindCg::kMemory);
  if (limits.max_processes) kinds.push_back(LimitKindCg::kProcesses);
  if (options.cpus) kinds.push_back(LimitKindCg::kCpu);
  if (kinds.empty()) return group;

  auto cached = hierarchies_for(options.cgroup_root, /*refresh=*/false);
  if (!cached) return group;  // no cgroups to be had: nothing enforced
  bool refreshed = false;

  // Finds or makes the group under `parent` (co-mounted controllers, or the one v2 tree,
  // share one directory).
  auto group_under = [&](const fs::path& parent, bool v2) -> Result<Group*> {
    for (auto& g : group.groups_) {
      if (g.dir.parent_path() == parent) return &g;
    }
    auto dir = make_run_cgroup_dir(parent);
    if (!dir) return std::unexpected(dir.error());
    group.groups_.push_back(Group{std::move(dir->path), v2, 0, {}, std::move(dir->lock)});
    return &group.groups_.back();
  };

  for (const auto kind : kinds) {
    auto site = locate(kind, **cached, options.cgroup_root, /*enable=*/true);
    if (!site) continue;  // unavailable here: unavailable_reason() says why
    auto g = group_under(site->parent, site->v2);
    if (!g && g.error().sys_errno == ENOENT && !refreshed) {
      // Our own cgroup is gone, so we were moved since discovery: look again, once.
      refreshed = true;
      if (auto fresh = hierarchies_for(options.cgroup_root, /*refresh=*/true)) cached = *fresh;
      site = locate(kind, **cached, options.cgroup_root, /*enable=*/true);
      if (!site) continue;
      g = group_under(site->parent, site->v2);
    }
    if (!g) continue;  // no permission (no delegation), read-only: a limit not placed
    auto applied = write_group_limit((*g)->dir, (*g)->v2, kind, limits, options);
    if (!applied) return std::unexpected(applied.error());  // ~LimitGroup removes the groups
    (*g)->roles |= role_of(kind);
    if ((*g)->v2) (*g)->roles |= kRoleCpuacct;  // v2 cpu.stat has usage_usec, no controller
    group.enforced_.push_back(placed_in(std::move(*applied), site->via));
  }

  // v1 CPU time comes from cpuacct, which this machine kind mounts apart from cpu: one more
  // group, only when a CPU limit asked for the cpu hierarchy anyway.
  if (group.has(LimitKindCg::kCpu)) {
    if (const auto* acct = find_v1_hierarchy(**cached, "cpuacct")) {
      if (auto g = group_under(acct->own_dir, false)) (*g)->roles |= kRoleCpuacct;
    }
  }

  for (auto& g : group.groups_) open_figures(g);
  for (const auto& g : group.groups_) {
    if (g.v2) {
      // For clone3(CLONE_INTO_CGROUP): the child is born inside, no migration.
      group.v2_dir_.reset(::open(g.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!group.v2_dir_) return fail_errno("open " + g.dir.string());
    }
  }
  return group;
}

LimitGroup::LimitGroup(LimitGroup&& other) noexcept
    : groups_(std::exchange(other.groups_, {})),
      enforced_(std::exchange(other.enforced_, {})),
      v2_dir_(std::move(other.v2_dir_)) {}

LimitGroup& LimitGroup::operator=(LimitGroup&& other) noexcept {
  if (this != &other) {
    (void)remove(Clock::now() + std::chrono::seconds(2));
    groups_ = std::exchange(other.groups_, {});
    enforced_ = std::exchange(other.enforced_, {});
    v2_dir_ = std::move(other.v2_dir_);
  }
  return *this;
}

LimitGroup::~LimitGroup() {
  if (!groups_.empty()) (void)remove(Clock::now() + std::chrono::seconds(2));
}

bool LimitGroup::has(LimitKindCg kind) const {
  for (const auto& e : enforced_) {
    if (e.kind == kind) return true;
  }
  return false;
}

Status LimitGroup::join(pid_t pid, bool include_v1) const {
  // The limits are already in place (create): joining is the last step, so the process is
  // never inside a group without them.
  const std::string text = std::to_string(pid);
  for (const auto& g : groups_) {
    if (!g.v2 && !include_v1) continue;
    if (auto st = cgroupfs::write(g.dir / "cgroup.procs", text); !st) return st;
  }
  return {};
}

Result<std::vector<UniqueFd>> LimitGroup::self_join_fds() const {
  std::vector<UniqueFd> fds;
  for (const auto& g : groups_) {
    if (g.v2) continue;
    const std::filesystem::path tasks = g.dir / "tasks";
    UniqueFd fd(::open(tasks.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) return fail_errno("open " + tasks.string());
    fds.push_back(std::move(fd));
  }
  return fds;
}

int LimitGroup::v2_dir_fd() const { return v2_dir_.get(); }

void LimitGroup::open_figures(Group& group) {
  using cgroupfs::Figure;
  std::vector<Figure> wanted;
  if ((group.roles & kRoleMemory) != 0)
    wanted.insert(wanted.end(), {Figure::kOomKills, Figure::kMemoryPeak});
  if ((group.roles & kRolePids) != 0) wanted.push_back(Figure::kPidsMaxHits);
  if ((group.roles & kRoleCpuacct) != 0) wanted.push_back(Figure::kCpuUsec);
  for (const Figure which : wanted) {
    const fs::path file = group.dir / cgroupfs::figure_file(which, group.v2);
    // Not open (absent, e.g. memory.peak before Linux 5.19): figure() reads by path.
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd) group.figures.emplace_back(which, std::move(fd));
  }
}

std::optional<std::int64_t> LimitGroup::figure(const Group& group, cgroupfs::Figure which) {
  for (const auto& [opened, fd] : group.figures) {
    if (opened != which) continue;
    const Result<std::string> text = cgroupfs::read_again(fd.get());
    return text ? cgroupfs::figure_value(which, group.v2, *text) : std::nullopt;
  }
  return cgroupfs::read_figure(group.dir, which, group.v2);
}

LimitGroupStats LimitGroup::stats() const {
  using cgroupfs::Figure;
  LimitGroupStats out;
  for (const auto& g : groups_) {
    if ((g.roles & kRoleMemory) != 0) {
      out.oom_killed = figure(g, Figure::kOomKills).value_or(0) > 0;
      if (auto bytes = figure(g, Figure::kMemoryPeak)) out.memory_peak_kb = *bytes / 1024;
    }
    if ((g.roles & kRolePids) != 0) {
      out.pids_limit_hit = figure(g, Figure::kPidsMaxHits).value_or(0) > 0;
    }
    if ((g.roles & kRoleCpuacct) != 0) out.cpu_usec = figure(g, Figure::kCpuUsec);
  }
  return out;
}

std::optional<ResourceSample> LimitGroup::usage() const {
  ResourceSample out;
  for (const auto& g : groups_) {
    if ((g.roles & kRoleMemory) != 0) {
      if (auto v = cgroupfs::memory_current(g.dir, g.v2); v && *v >= 0) {
        out.memory_bytes = static_cast<std::uint64_t>(*v);
      }
    }
    if ((g.roles & kRoleCpuacct) != 0) {
      if (auto usec = figure(g, cgroupfs::Figure::kCpuUsec); usec && *usec >= 0) {
        out.cpu_usec = static_cast<std::uint64_t>(*usec);
      }
    }
  }
  if (!out.memory_bytes && !out.cpu_usec) return std::nullopt;
  return out;
}

Status LimitGroup::remove(Clock::time_point until) {
  v2_dir_.reset();
  Status status;
  std::vector<Group> left;
  for (auto& g : groups_) {
    g.figures.clear();  // kernfs lets a group with open files go; close them all the same
    if (auto st = kill_and_remove_group(g.dir, g.v2, until); !st) {
      if (status) status = std::unexpected(st.error());
      left.push_back(std::move(g));  // the destructor tries again
    }
  }
  groups_ = std::move(left);
  enforced_.clear();
  return status;
}

std::optional<LimitApplied> LimitGroup::planned(LimitKindCg kind,
                                                const LimitGroupOptions& options) {
  if (!unavailable_reason(kind, options).empty()) return std::nullopt;
  auto hierarchies = hierarchies_for(options.cgroup_root, /*refresh=*/false);
  if (!hierarchies) return std::nullopt;
  auto site = locate(kind, **hierarchies, options.cgroup_root, /*enable=*/false);
  if (!site) return std::nullopt;
  // The swap files are in every memory group of a kernel that accounts swap, ours
  // included (v1: the root too; v2: every group but the root, handled below).
  const char* swap_file = site->v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes";
  std::error_code ec;
  bool swap = kind == LimitKindCg::kMemory && fs::exists(site->probe_dir / swap_file, ec);
  if (kind == LimitKindCg::kMemory && site->v2 &&
      !fs::exists(site->probe_dir / "cgroup.type", ec)) {
    // The v2 root has no memory.swap.max even where swap is accounted (a bare v2 host with
    // cordon in the root group): ask a child group with the memory controller, or, with
    // none, the kernel's command line (swap is accounted unless swapaccount=0).
    swap = false;
    bool asked = false;
    for (const auto& child : fs::directory_iterator(site->probe_dir, ec)) {
      if (!fs::exists(child.path() / "memory.max", ec)) continue;
      swap = fs::exists(child.path() / "memory.swap.max", ec);
      asked = true;
      break;
    }
    if (!asked) {
      const auto cmdline = cgroupfs::read("/proc/cmdline");
      swap = cmdline && cmdline->find("swapaccount=0") == std::string::npos;
    }
  }
  return placed_in(describe(kind, site->v2, swap), site->via);
}

std::string LimitGroup::unavailable_reason(LimitKindCg kind, const LimitGroupOptions& options) {
  auto hierarchies = hierarchies_for(options.cgroup_root, /*refresh=*/true);
  if (!hierarchies) return hierarchies.error().describe();
  auto site = locate(kind, **hierarchies, options.cgroup_root, /*enable=*/false);
  if (!site) return site.error().describe();
  // Creating a group is a mkdir in the parent's directory: write access is the test (EROFS
  // for a read-only mount, EACCES without delegation). A scope still to be made is ours.
  if (!site->parent.empty() && ::access(site->parent.c_str(), W_OK) != 0) {
    return "cannot create a group under " + site->parent.string() + ": " + errno_text(errno);
  }
  return {};
}

Result<int> sweep_stale_limit_groups(const LimitGroupOptions& options) {
  auto hierarchies = hierarchies_for(options.cgroup_root, /*refresh=*/true);
  if (!hierarchies) return std::unexpected(hierarchies.error());
  int removed = 0;
  for (const auto& h : **hierarchies) {
    if (h.v2) {
      // Same names, same rule (no owner holds its lock): the cgroup v2 sweep does it.
      // Below the delegated parent once we have one (the dead cordons' scopes are swept
      // when it is acquired), else below our own group.
      if (auto n = sweep_stale_cgroups(group_parent_dir(h))) removed += *n;
      continue;
    }
    if (!is_limit_controller(h)) continue;  // we never create groups elsewhere
    auto n = sweep_unowned_cgroups(h.own_dir, [](const fs::path& dir) {
      return remove_v1_group(dir, Clock::now() + std::chrono::seconds(2)).has_value();
    });
    if (n) removed += *n;
  }
  return removed;
}

}  // namespace cordon::proc
