#include "cordon/temp_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cordon/owner.h"
#include "cordon/unique_fd.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

fs::path default_parent() {
  const char* tmpdir = std::getenv("TMPDIR");
  // A relative TMPDIR would depend on the cwd of whichever thread asks; ignore it.
  if (tmpdir && tmpdir[0] == '/') return tmpdir;
  return "/tmp";
}

// A tmpfs with less room than this is passed over for /tmp: a full /dev/shm (another
// program's shared memory) must not fail every run. A run's directories hold little
// (a container's root skeleton, code files, small inputs); sized scratch is its own mount.
constexpr std::uint64_t kMinFreeBytes = 16ULL << 20;
constexpr std::uint64_t kMinFreeInodes = 1024;

bool is_writable_tmpfs_with_room(const char* path) {
  struct statfs st{};
  if (::statfs(path, &st) != 0 || st.f_type != TMPFS_MAGIC) return false;
  const std::uint64_t free_bytes = static_cast<std::uint64_t>(st.f_bavail) * st.f_bsize;
  // f_files is 0 on a tmpfs without an inode limit (nr_inodes=0).
  const bool inodes = st.f_files == 0 || st.f_ffree >= kMinFreeInodes;
  return free_bytes >= kMinFreeBytes && inodes && ::access(path, W_OK | X_OK) == 0;
}

// Keeps the first error of a removal and carries on: removing as much as possible is
// worth more than stopping at the first file that resists.
struct FirstError {
  Status status;
  void note(Status s) {
    if (status && !s) status = std::move(s);
  }
  void note_errno(const std::string& what) { note(fail_errno(what)); }
};

// One directory on the way down. Only the current directory's fd is open, so the depth
// of the tree (which the sandboxed code chose) cannot exhaust fds or the stack.
struct Frame {
  dev_t dev = 0;
  ino_t ino = 0;
  std::string name;                  // in the parent
  std::string path;                  // for messages only
  std::vector<std::string> subdirs;  // still to descend into
};

// Unlinks everything in `dir` that is not a directory and returns the directories.
std::vector<std::string> unlink_files(int dir, const std::string& path, FirstError& err) {
  std::vector<std::string> subdirs;
  // fdopendir takes ownership of its fd, so it gets a duplicate.
  const int dup = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) {
    err.note_errno("dup " + path);
    return subdirs;
  }
  DIR* stream = ::fdopendir(dup);
  if (!stream) {
    err.note_errno("fdopendir " + path);
    ::close(dup);
    return subdirs;
  }
  // Names first, unlinks after: readdir's view of a directory being changed under it is
  // unspecified.
  std::vector<std::string> files;
  errno = 0;
  while (const dirent* entry = ::readdir(stream)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = entry->d_type == DT_DIR;
    if (entry->d_type == DT_UNKNOWN) {
      struct stat st{};
      is_dir = ::fstatat(dir, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    (is_dir ? subdirs : files).emplace_back(name);
  }
  if (errno != 0) err.note_errno("readdir " + path);
  ::closedir(stream);
  for (const auto& name : files) {
    // unlinkat without AT_REMOVEDIR removes a symlink itself, never its target.
    if (::unlinkat(dir, name.c_str(), 0) != 0 && errno != ENOENT) {
      err.note_errno("unlink " + path + "/" + name);
    }
  }
  return subdirs;
}

// Opens subdirectory `name` of `parent` for removal: never through a symlink, never onto
// another filesystem (a bind mount inside would lead the walk into the host), and after
// giving the owner rwx back if the code took it away.
Result<UniqueFd> enter(int parent, const std::string& name, const std::string& path, dev_t dev) {
  struct stat st{};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return fail_errno("stat " + path);
  }
  if (!S_ISDIR(st.st_mode)) return fail(ErrorCode::kInternal, path + " is no longer a directory");
  if (st.st_dev != dev) {
    return fail(ErrorCode::kInvalidArgument, "refusing to remove " + path + ": a mount point");
  }
  if ((st.st_mode & S_IRWXU) != S_IRWXU) {
    const mode_t mode = (st.st_mode & 07777) | S_IRWXU;
    // glibc implements AT_SYMLINK_NOFOLLOW through /proc; without /proc it reports
    // EOPNOTSUPP, and the plain call is then fine: lstat just said it is a directory.
    if (::fchmodat(parent, name.c_str(), mode, AT_SYMLINK_NOFOLLOW) != 0 &&
        (errno != EOPNOTSUPP || ::fchmodat(parent, name.c_str(), mode, 0) != 0)) {
      return fail_errno("chmod " + path);
    }
  }
  UniqueFd fd(::openat(parent, name.c_str(), kDirFlags));
  if (!fd) return fail_errno("open " + path);
  return fd;
}

// The directory one level up, checked to be the one we came from (by device and inode):
// ".." is only trusted when it leads back where we were.
Result<UniqueFd> go_up(int dir, const Frame& parent) {
  UniqueFd fd(::openat(dir, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return fail_errno("open " + parent.path);
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return fail_errno("stat " + parent.path);
  if (st.st_dev != parent.dev || st.st_ino != parent.ino) {
    return fail(ErrorCode::kInternal, parent.path + " was moved during removal");
  }
  return fd;
}

Status remove_directory(int parent_fd, const std::string& name, const std::string& path) {
  FirstError err;
  struct stat st{};
  if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return fail_errno("stat " + path);
  }
  auto root = enter(parent_fd, name, path, st.st_dev);
  if (!root) return std::unexpected(root.error());
  UniqueFd cur = std::move(*root);
  const dev_t dev = st.st_dev;

  std::vector<Frame> stack;
  stack.push_back(Frame{st.st_dev, st.st_ino, name, path, unlink_files(cur.get(), path, err)});
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (!top.subdirs.empty()) {
      std::string sub = std::move(top.subdirs.back());
      top.subdirs.pop_back();
      // An empty directory (the common case: a run's work/ and home/) goes with one
      // rmdir, which never follows a symlink and fails on a non-empty directory or a
      // mount point; only then is it walked.
      if (::unlinkat(cur.get(), sub.c_str(), AT_REMOVEDIR) == 0) continue;
      std::string sub_path = top.path + "/" + sub;
      auto child = enter(cur.get(), sub, sub_path, dev);
      if (!child) {
        err.note(std::unexpected(child.error()));
        continue;
      }
      struct stat child_st{};
      if (::fstat(child->get(), &child_st) != 0) {
        err.note_errno("stat " + sub_path);
        continue;
      }
      auto subdirs = unlink_files(child->get(), sub_path, err);
      stack.push_back(Frame{child_st.st_dev, child_st.st_ino, std::move(sub), std::move(sub_path),
                            std::move(subdirs)});
      cur = std::move(*child);
      continue;
    }
    // `top` is as empty as we could make it: step up and remove it.
    if (stack.size() == 1) {
      cur.reset();
      if (::unlinkat(parent_fd, top.name.c_str(), AT_REMOVEDIR) != 0) {
        err.note_errno("rmdir " + top.path);
      }
      break;
    }
    auto up = go_up(cur.get(), stack[stack.size() - 2]);
    if (!up) {
      err.note(std::unexpected(up.error()));
      return err.status;  // lost our place in the tree: stop rather than guess
    }
    if (::unlinkat(up->get(), top.name.c_str(), AT_REMOVEDIR) != 0) {
      err.note_errno("rmdir " + top.path);
    }
    cur = std::move(*up);
    stack.pop_back();
  }
  return err.status;
}

}  // namespace

Result<TempDir> TempDir::create(std::string_view prefix, const fs::path& parent) {
  if (prefix.find('/') != std::string_view::npos) {
    return fail(ErrorCode::kInvalidArgument, "temp dir prefix contains '/'");
  }
  const fs::path base = parent.empty() ? default_parent() : parent;
  std::string templ = (base / prefix).string() + "XXXXXX";
  // mkdtemp creates the directory with mode 0700.
  if (::mkdtemp(templ.data()) == nullptr) return fail_errno("mkdtemp " + templ);
  return TempDir(fs::path(std::move(templ)));
}

fs::path default_run_parent() {
  if (const char* dir = std::getenv("CORDON_RUN_DIR"); dir != nullptr && dir[0] == '/') return dir;
  if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir != nullptr && tmpdir[0] == '/') {
    return tmpdir;
  }
  if (is_writable_tmpfs_with_room("/dev/shm")) return "/dev/shm";
  return "/tmp";
}

Result<int> sweep_stale_temp_dirs(std::string_view prefix, const fs::path& parent) {
  const fs::path base = parent.empty() ? default_parent() : parent;
  std::error_code ec;
  int removed = 0;
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    const auto owner = owner_pid(entry.path().filename().string(), prefix);
    if (!owner || pid_alive(*owner) || !entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    if (auto status = remove_tree(entry.path()); !status) return std::unexpected(status.error());
    ++removed;
  }
  if (ec) return fail_errno("list " + base.string(), ec.value());
  return removed;
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    if (!path_.empty()) (void)remove_tree(path_);
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

TempDir::~TempDir() {
  if (!path_.empty()) (void)remove_tree(path_);
}

Status TempDir::remove() {
  if (path_.empty()) return {};
  auto status = remove_tree(path_);
  if (status) path_.clear();
  return status;
}

Status remove_tree(const fs::path& path) {
  // "dir/" names the same directory as "dir"; strip the slash so the last component is
  // the directory's name in its parent.
  fs::path target = path.lexically_normal();
  if (!target.has_filename() && target.has_parent_path() && target != target.root_path()) {
    target = target.parent_path();
  }
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return fail(ErrorCode::kInvalidArgument, "refusing to remove '" + path.string() + "'");
  }
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  UniqueFd parent_fd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd) {
    if (errno == ENOENT) return {};
    return fail_errno("open " + parent.string());
  }
  struct stat st{};
  if (::fstatat(parent_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return {};  // already gone: removal is idempotent
    return fail_errno("stat " + target.string());
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(parent_fd.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
      return fail_errno("unlink " + target.string());
    }
    return {};
  }
  return remove_directory(parent_fd.get(), name, target.string());
}

}  // namespace cordon
