// Per-instance locks, and the sweep of what dead instances left.
#include "instance.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_cgroups.h"
#include "cordon/temp_dir.h"

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
  inst.id_ = std::to_string(::getpid()) + "-" + std::to_string(g_instances.fetch_add(1));
  const fs::path lock = runtime_dir / "locks" / (inst.id_ + ".lock");
  // The last instance to go removes the (then empty) directories; one going away while
  // this one starts can remove them between our mkdir and open: try again.
  for (int attempt = 0; attempt < 3 && !inst.lock_; ++attempt) {
    for (const fs::path& d :
         {runtime_dir, runtime_dir / "locks", runtime_dir / "bundles", runtime_dir / "state"}) {
      if (auto st = make_private_dir(d); !st) return std::unexpected(st.error());
    }
    inst.lock_.reset(::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!inst.lock_ && errno != ENOENT) break;
  }
  if (!inst.lock_) return fail_errno("open " + lock.string());
  if (::flock(inst.lock_.get(), LOCK_EX | LOCK_NB) != 0)
    return fail_errno("flock " + lock.string());
  return inst;
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
                                  Clock::time_point until) {
  const std::string id = kContainerPrefix + name;
  Status result = runtime.destroy(id, until);
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

Result<int> sweep_dead_instances(const fs::path& runtime_dir, const RuntimeCli& runtime,
                                 const std::vector<proc::CgroupHierarchy>& hierarchies,
                                 const std::function<void(const std::string&)>& on_dead) {
  int swept = 0;
  std::error_code ec;
  const auto until = Clock::now() + std::chrono::seconds(10);
  for (const auto& e : fs::directory_iterator(runtime_dir / "locks", ec)) {
    const std::string file = e.path().filename();
    if (!file.ends_with(".lock")) continue;
    const std::string instance = file.substr(0, file.size() - 5);
    UniqueFd fd(::open(e.path().c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;  // alive (or gone)
    if (on_dead) on_dead(instance);
    for (const auto& b : fs::directory_iterator(runtime_dir / "bundles", ec)) {
      const std::string name = b.path().filename();
      if (!name.starts_with(instance + "-")) continue;
      (void)remove_container_leftovers(runtime_dir / "bundles", name, runtime, hierarchies, until);
      ++swept;
    }
    ::unlink(e.path().c_str());
  }
  return swept;
}

}  // namespace cordon::oci
