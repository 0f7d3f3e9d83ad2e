// Per-instance locks, and the sweep of what dead instances left.
#include "instance.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "container_cgroups.h"
#include "cordon/lock_file.h"
#include "cordon/proc/cgroup_delegation.h"
#include "cordon/proc/limit_group.h"
#include "cordon/temp_dir.h"
#include "runtime_record.h"

namespace cordon::oci {
namespace {

namespace fs = std::filesystem;

std::atomic<unsigned> g_instances{0};

Status make_private_dir(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fail_errno("mkdir " + dir.string());
  }
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) return fail_errno("lstat " + dir.string());
  // Refuse a directory someone else made (or a symlink planted) at our path.
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
    return fail(ErrorCode::kUnavailable, dir.string() + " is not a directory of ours");
  }
  return {};
}

}  // namespace

Result<Instance> Instance::acquire(const fs::path& runtime_dir) {
  Instance inst;
  inst.dir_ = runtime_dir;
  // Each attempt takes a fresh id: a name already there is a dead namesake's (our pid,
  // recycled: pid_max can be 32768) and stays for the sweep, and a lock file a sweeper
  // took from us before our flock may have had bundles of that id removed with it.
  for (int attempt = 0; attempt < 256; ++attempt) {
    inst.id_ = std::to_string(::getpid()) + "-" + std::to_string(g_instances.fetch_add(1));
    const fs::path lock = runtime_dir / "locks" / (inst.id_ + ".lock");
    // The last instance to go removes the (then empty) directories; one going away while
    // this one starts can remove them between our mkdir and open (ENOENT): try again.
    for (const fs::path& d :
         {runtime_dir, runtime_dir / "locks", runtime_dir / "bundles", runtime_dir / "state"}) {
      if (auto st = make_private_dir(d); !st) return std::unexpected(st.error());
    }
    auto fd = try_lock_file(lock, LockOpen::kCreateNew);
    if (!fd) return std::unexpected(fd.error());
    if (!*fd) continue;  // a dead namesake's, held by a sweeper, or taken from us: next id
    inst.lock_ = std::move(*fd);
    return inst;
  }
  return fail(ErrorCode::kUnavailable,
              "no instance lock could be taken under " + (runtime_dir / "locks").string());
}

std::string Instance::unusable(const fs::path& runtime_dir) {
  for (const fs::path& d :
       {runtime_dir, runtime_dir / "locks", runtime_dir / "bundles", runtime_dir / "state"}) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(d, ec);
    if (fs::exists(st)) {
      if (!fs::is_directory(st)) return d.string() + " is not a directory";
      if (::access(d.c_str(), W_OK | X_OK) != 0) return d.string() + ": " + std::strerror(errno);
      continue;
    }
    // acquire() makes one level: the parent must be there, and writable.
    const fs::path parent = d.parent_path();
    if (!fs::is_directory(parent, ec)) return parent.string() + " is not a directory";
    if (::access(parent.c_str(), W_OK | X_OK) != 0) {
      return "cannot make " + d.string() + ": " + std::strerror(errno);
    }
    return {};  // what is below a directory to be made cannot be in the way
  }
  return {};
}

Instance::Instance(Instance&& o) noexcept
    : dir_(std::move(o.dir_)),
      id_(std::move(o.id_)),
      lock_(std::move(o.lock_)),
      counter_(o.counter_.load()) {}

Instance& Instance::operator=(Instance&& o) noexcept {
  dir_ = std::move(o.dir_);
  id_ = std::move(o.id_);
  lock_ = std::move(o.lock_);
  counter_ = o.counter_.load();
  return *this;
}

Instance::~Instance() {
  if (!lock_) return;
  // Unlink first, then unlock: a sweeper that opens the path after this sees no file.
  ::unlink((dir_ / "locks" / (id_ + ".lock")).c_str());
  // The last instance leaves nothing behind: rmdir fails on a directory still in use.
  for (const fs::path& d : {dir_ / "bundles", dir_ / "state", dir_ / "locks", dir_}) {
    if (::rmdir(d.c_str()) != 0) break;
  }
}

std::string Instance::next_name() { return id_ + "-" + std::to_string(counter_.fetch_add(1)); }

Status remove_container_leftovers(const fs::path& bundles_dir, const std::string& name,
                                  const RuntimeCli& runtime,
                                  const std::vector<proc::CgroupHierarchy>& hierarchies,
                                  Clock::time_point until, bool runtime_deleted) {
  const std::string id = kContainerPrefix + name;
  Status result = runtime_deleted ? Status() : runtime.destroy(id, until);
  // The container's own group went with the runtime's delete; its parents are cordon's
  // (and the ones the runtime made in other hierarchies).
  remove_container_cgroups(hierarchies, id);
  const fs::path bundle = bundles_dir / name;
  // MNT_DETACH: nothing of ours still uses it; a busy lazy unmount completes later.
  ::umount2((bundle / "scratch").c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
  std::error_code ec;
  if (fs::exists(bundle, ec)) {
    if (auto st = remove_tree(bundle); !st && result) result = st;
  }
  return result;
}

namespace {

// "<pid>-<k>" of a container name "<pid>-<k>-<rest>", or "" when the name is not of that
// form (bundles and cgroups are named alike; the cgroups with kContainerPrefix).
std::string instance_of(const std::string& name) {
  const auto first = name.find('-');
  if (first == std::string::npos || first == 0) return {};
  const auto second = name.find('-', first + 1);
  if (second == std::string::npos || second == first + 1) return {};
  std::string id = name.substr(0, second);
  if (id.find_first_not_of("0123456789-") != std::string::npos) return {};
  return id;
}

// Container names ("<instance>-<n>") of every group kContainerPrefix + name under cordon's
// own cgroup in any hierarchy.
std::set<std::string> cgroup_names(const std::vector<proc::CgroupHierarchy>& hierarchies) {
  std::set<std::string> out;
  const std::string_view prefix = kContainerPrefix;
  for (const auto& h : hierarchies) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(proc::group_parent_dir(h), ec)) {
      std::string name = e.path().filename();
      if (name.starts_with(prefix) && e.is_directory(ec)) out.insert(name.substr(prefix.size()));
    }
  }
  return out;
}

// Removes everything of `instance`: its bundles with their containers, and its cgroups
// even where no bundle is left (a cordon killed after it made a container's groups and
// before it wrote the bundle, or one whose rmdir met a process still exiting); whatever
// still runs in those groups is the dead cordon's code and is killed. True when nothing
// of it is left.
// `groups`: cgroup_names(), listed once per sweep.
bool sweep_instance(const fs::path& runtime_dir, const std::string& instance,
                    const RuntimeCli& runtime,
                    const std::vector<proc::CgroupHierarchy>& hierarchies,
                    const std::set<std::string>& groups, Clock::time_point until, int& swept) {
  bool clean = true;
  std::error_code ec;
  std::vector<std::string> names;  // listed first: removing while listing may skip entries
  for (const auto& b : fs::directory_iterator(runtime_dir / "bundles", ec)) {
    std::string name = b.path().filename();
    if (name.starts_with(instance + "-")) names.push_back(std::move(name));
  }
  if (ec) return false;
  for (const std::string& name : names) {
    // By the runtime that made it, with its flags (runtime_record.h), not necessarily ours.
    const RuntimeCli made_by = recorded_runtime(runtime_dir / "bundles" / name, runtime);
    (void)remove_container_leftovers(runtime_dir / "bundles", name, made_by, hierarchies, until);
    if (fs::exists(runtime_dir / "bundles" / name, ec)) clean = false;
    ++swept;
  }
  for (const std::string& name : groups) {
    if (!name.starts_with(instance + "-")) continue;
    const std::string group = kContainerPrefix + name;
    (void)runtime.destroy(group, until);  // its state, if the runtime still has one
    for (const auto& h : hierarchies) {
      if (!proc::kill_and_remove_group(proc::group_parent_dir(h) / group, h.v2, until))
        clean = false;
    }
    ++swept;
  }
  return clean;
}

// A lock-less instance's leftovers are swept only when its pid is not running: a process
// that reused the pid may be a cordon that took the same instance id (its own start sweeps
// them), and what it makes meanwhile must not be taken for the dead one's.
bool pid_running(const std::string& instance) {
  const auto pid = static_cast<pid_t>(std::strtol(instance.c_str(), nullptr, 10));
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

}  // namespace

Result<int> sweep_dead_instances(const fs::path& runtime_dir, const RuntimeCli& runtime,
                                 const std::vector<proc::CgroupHierarchy>& hierarchies,
                                 const std::function<void(const std::string&)>& on_dead,
                                 const std::string& own_instance) {
  int swept = 0;
  std::error_code ec;
  const auto until = Clock::now() + std::chrono::seconds(10);
  const std::set<std::string> groups = cgroup_names(hierarchies);
  // Our own instance has made nothing yet: anything under its id is a dead namesake's
  // (our pid, recycled) whose lock was already gone when we took the id.
  if (!own_instance.empty()) {
    (void)sweep_instance(runtime_dir, own_instance, runtime, hierarchies, groups, until, swept);
  }
  std::set<std::string> with_lock;
  for (const auto& e : fs::directory_iterator(runtime_dir / "locks", ec)) {
    const std::string file = e.path().filename();
    if (!file.ends_with(".lock")) continue;
    const std::string instance = file.substr(0, file.size() - 5);
    with_lock.insert(instance);
    UniqueFd fd(::open(e.path().c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;  // alive (or gone)
    if (on_dead) on_dead(instance);
    // The lock file goes last, and only when everything of the instance went: until then
    // the next start sees a dead instance and tries again.
    if (sweep_instance(runtime_dir, instance, runtime, hierarchies, groups, until, swept)) {
      ::unlink(e.path().c_str());
    }
  }
  // Bundles and cgroups of an instance without a lock file: none of a live instance (it
  // makes its lock before anything else and removes the rest before its lock), so they are
  // what a killed cordon left when its lock was already gone. Sweep those too.
  std::set<std::string> orphans;
  auto consider = [&](const std::string& name) {
    const std::string instance = instance_of(name);
    if (!instance.empty() && instance != own_instance && !with_lock.contains(instance) &&
        !fs::exists(runtime_dir / "locks" / (instance + ".lock"), ec) && !pid_running(instance)) {
      orphans.insert(instance);
    }
  };
  for (const auto& b : fs::directory_iterator(runtime_dir / "bundles", ec)) {
    consider(b.path().filename());
  }
  for (const std::string& name : groups) consider(name);
  for (const std::string& instance : orphans) {
    if (on_dead) on_dead(instance);
    (void)sweep_instance(runtime_dir, instance, runtime, hierarchies, groups, until, swept);
  }
  return swept;
}

}  // namespace cordon::oci
