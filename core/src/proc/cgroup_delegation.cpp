// v2_group_parent: the route to a cgroup v2 parent cordon may hand controllers from.
#include "cordon/proc/cgroup_delegation.h"

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <charconv>
#include <mutex>
#include <string_view>

#include "cordon/owner.h"
#include "cordon/proc/cgroup2.h"
#include "cordon/proc/cgroup_fs.h"
#include "cordon/proc/limit_group.h"
#include "cordon/proc/systemd_scope.h"

namespace cordon::proc {
namespace fs = std::filesystem;
namespace {

// The only tree ever rearranged (see the header).
const fs::path kRealRoot = "/sys/fs/cgroup";

// Our leaf's name: the counter of next_owned_name starts at 1, so no run group is "-0".
std::string leaf_name(pid_t pid) { return "cordon-" + std::to_string(pid) + "-0"; }

bool xattr_is_one(const fs::path& dir, const char* name) {
  char value[8] = {};
  const ssize_t n = ::getxattr(dir.c_str(), name, value, sizeof(value) - 1);
  return n == 1 && value[0] == '1';
}

// Makes our own leaf and holds its lock for the rest of the process's life (the fd is never
// closed): the leaf lies beside the run groups, and a sweep takes a group whose lock is free
// for a dead run's (sweep_unowned_cgroups) and would kill what runs in it, cordon itself.
Status hold_own_leaf(const fs::path& leaf_dir) {
  auto lock = make_locked_cgroup_dir(leaf_dir);
  if (!lock) return std::unexpected(lock.error());
  (void)lock->release();
  return {};
}

// move_group_into_leaf, or (only_ourselves) just this process, into `leaf_dir`.
Status move_processes_into_leaf(const fs::path& from, const fs::path& leaf_dir,
                                bool only_ourselves) {
  if (::mkdir(leaf_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return fail_errno("mkdir " + leaf_dir.string());
  }
  const fs::path procs = leaf_dir / "cgroup.procs";
  if (only_ourselves) return cgroupfs::write(procs, std::to_string(::getpid()));
  for (int round = 0; round < 20; ++round) {
    auto text = cgroupfs::read(from / "cgroup.procs");
    if (!text) return std::unexpected(text.error());
    if (text->empty()) return {};
    std::string_view rest = *text;
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      const std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      if (line.empty()) continue;
      auto st = cgroupfs::write(procs, line);
      // ESRCH: it exited meanwhile.
      if (!st && st.error().sys_errno != ESRCH) {
        return fail(ErrorCode::kUnavailable, "move process " + std::string(line) + " from " +
                                                 from.string() + " to " + leaf_dir.string() + ": " +
                                                 st.error().describe());
      }
    }
  }
  return fail(ErrorCode::kUnavailable,
              from.string() + " still holds processes after 20 rounds of moving them out");
}

// The words of each route for claims and runs. No pid or path in them: a claim is hashed
// into the audit's policy identity, which must not change from one cordon process to the
// next.
constexpr const char* kViaScope =
    "a transient systemd scope cordon-<pid>.scope with Delegate=yes (cordon moved into it)";
constexpr const char* kViaDelegated =
    "cordon's own cgroup, delegated to it by systemd (its processes moved to a leaf)";
constexpr const char* kViaOwnLeaf =
    "cordon's own cgroup (no systemd manages the tree; its processes moved to a leaf)";
constexpr const char* kViaSibling = "the cgroup of the cordon that started this one";

std::mutex g_mutex;
std::optional<V2Parent> g_acquired;  // guarded by g_mutex

}  // namespace

V2Route choose_v2_route(const V2Facts& facts) {
  // Without controllers to hand on (a hybrid host's v2 tree) groups need no delegation.
  if (!facts.offers_controllers || facts.own_is_root || !facts.own_holds_processes) {
    return V2Route::kOwnGroup;
  }
  if (facts.in_cordon_leaf) return V2Route::kSiblingLeaf;
  if (facts.delegated_to_us || !facts.systemd) return V2Route::kLeaf;
  return V2Route::kSystemdScope;
}

V2Facts read_v2_facts(const fs::path& own_dir) {
  V2Facts f;
  std::error_code ec;
  auto controllers = cgroupfs::read_small(own_dir / "cgroup.controllers");
  f.offers_controllers = controllers && controllers->find_first_not_of(" \n") != std::string::npos;
  f.own_is_root = !fs::exists(own_dir / "cgroup.type", ec);  // the root has none
  auto procs = cgroupfs::read(own_dir / "cgroup.procs");
  f.own_holds_processes = procs && !procs->empty();
  // systemd marks a delegated group with trusted.delegate (system manager) or user.delegate
  // (a user manager, which may not write trusted.* xattrs).
  f.delegated_to_us =
      xattr_is_one(own_dir, "trusted.delegate") || xattr_is_one(own_dir, "user.delegate");
  f.systemd = fs::exists("/run/systemd/system", ec);
  const auto owner = cgroup_owner_pid(own_dir.filename().string());
  f.in_cordon_leaf = owner && own_dir.filename() == leaf_name(*owner) && pid_alive(*owner);
  return f;
}

std::optional<V2Parent> acquired_v2_parent() {
  std::lock_guard lock(g_mutex);
  return g_acquired;
}

Result<V2Parent> v2_group_parent(const CgroupHierarchy& v2, const fs::path& cgroup_root,
                                 bool acquire) {
  std::lock_guard lock(g_mutex);
  if (g_acquired) return *g_acquired;
  const V2Facts facts = read_v2_facts(v2.own_dir);
  const V2Route route = choose_v2_route(facts);
  if (route == V2Route::kOwnGroup) return V2Parent{v2.own_dir, ""};
  const pid_t self = ::getpid();
  const bool real = cgroup_root == kRealRoot;

  if (route == V2Route::kSiblingLeaf || route == V2Route::kLeaf) {
    // Beside the cordon that started us (only we move), or our own group emptied into our
    // leaf (everything in it moves).
    const bool sibling = route == V2Route::kSiblingLeaf;
    const char* via = sibling ? kViaSibling : facts.delegated_to_us ? kViaDelegated : kViaOwnLeaf;
    V2Parent parent{sibling ? v2.own_dir.parent_path() : v2.own_dir, via};
    if (!acquire || !real) return parent;
    if (auto st = hold_own_leaf(parent.dir / leaf_name(self)); !st) {
      return std::unexpected(st.error());
    }
    if (auto st = move_processes_into_leaf(v2.own_dir, parent.dir / leaf_name(self),
                                           /*only_ourselves=*/sibling);
        !st) {
      return std::unexpected(st.error());
    }
    g_acquired = parent;
    return parent;
  }

  // kSystemdScope.
  const SystemdBus bus = default_systemd_bus();
  const std::string bus_name = bus == SystemdBus::kSystem ? "system" : "user";
  if (!systemd_bus_present(bus)) {
    return fail(ErrorCode::kUnavailable,
                "our own cgroup " + v2.own_dir.string() +
                    " holds processes and belongs to systemd, which delegated nothing to us, "
                    "and the " +
                    bus_name + " bus to ask it for a delegated scope is not there");
  }
  if (!acquire || !real) return V2Parent{fs::path(), kViaScope};
  const std::string unit = "cordon-" + std::to_string(self) + ".scope";
  if (auto st = start_delegated_scope(bus, unit, self, std::chrono::seconds(10)); !st) {
    return std::unexpected(st.error());
  }
  auto now = discover_cgroup_hierarchies(cgroup_root);
  if (!now) return std::unexpected(now.error());
  const auto* moved = find_v2_hierarchy(*now);
  if (moved == nullptr || moved->own_dir.filename() != unit) {
    return fail(ErrorCode::kUnavailable,
                "after systemd started " + unit + ", /proc/self/cgroup does not name it");
  }
  const fs::path scope = moved->own_dir;
  (void)sweep_dead_scopes(scope.parent_path());
  if (auto st = hold_own_leaf(scope / leaf_name(self)); !st) return std::unexpected(st.error());
  if (auto st = move_processes_into_leaf(scope, scope / leaf_name(self),
                                         /*only_ourselves=*/false);
      !st) {
    return std::unexpected(st.error());
  }
  g_acquired = V2Parent{scope, kViaScope};
  return *g_acquired;
}

fs::path group_parent_dir(const CgroupHierarchy& h) {
  if (h.v2) {
    if (auto acquired = acquired_v2_parent()) return acquired->dir;
  }
  return h.own_dir;
}

Status enable_v2_controller(const fs::path& parent, std::string_view controller) {
  const auto subtree = parent / "cgroup.subtree_control";
  auto enabled = cgroupfs::read_small(subtree);
  if (!enabled) return std::unexpected(enabled.error());
  if (cgroupfs::has_word(*enabled, controller)) return {};
  if (auto st = cgroupfs::write(subtree, "+" + std::string(controller)); !st) {
    return fail(ErrorCode::kUnavailable, "cannot enable " + std::string(controller) + " in " +
                                             subtree.string() + ": " + st.error().describe());
  }
  return {};
}

Status move_group_into_leaf(const fs::path& group, const fs::path& leaf) {
  return move_processes_into_leaf(group, leaf, /*only_ourselves=*/false);
}

std::optional<pid_t> scope_owner_pid(std::string_view name) {
  if (!name.starts_with("cordon-") || !name.ends_with(".scope")) return std::nullopt;
  name.remove_prefix(7);
  name.remove_suffix(6);
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc() || end != name.data() + name.size() || pid <= 0) return std::nullopt;
  return pid;
}

Result<int> sweep_dead_scopes(const fs::path& slice_dir) {
  std::error_code ec;
  fs::directory_iterator it(slice_dir, ec);
  if (ec) return fail(ErrorCode::kSystem, "list " + slice_dir.string() + ": " + ec.message());
  int swept = 0;
  for (const auto& entry : it) {
    const auto owner = scope_owner_pid(entry.path().filename().string());
    if (!owner || pid_alive(*owner) || !entry.is_directory(ec)) continue;
    // The dead cordon's run groups (and whatever they still run); its empty leaf too.
    fs::directory_iterator groups(entry.path(), ec);
    if (ec) continue;
    for (const auto& g : groups) {
      if (!g.is_directory(ec)) continue;
      (void)kill_and_remove_group(g.path(), /*v2=*/true,
                                  std::chrono::steady_clock::now() + std::chrono::seconds(2));
    }
    ++swept;
  }
  return swept;
}

}  // namespace cordon::proc
