#include "cordon/lock_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>

namespace cordon {

namespace {

// flock(LOCK_EX|LOCK_NB) on `fd`, opened from `path`, then the check that `path` still
// names it.
Result<UniqueFd> lock_opened(UniqueFd fd, const std::filesystem::path& path) {
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return UniqueFd();  // held, e.g. by a sweeper for the moment
    return fail_errno("flock " + path.string());
  }
  // Between our open and our flock the file was free: its holder (or a sweeper that took
  // us for dead) may have unlinked it. Then the path no longer names what we hold.
  struct stat held{};
  struct stat named{};
  if (::fstat(fd.get(), &held) != 0) return fail_errno("fstat " + path.string());
  if (::stat(path.c_str(), &named) != 0 || named.st_ino != held.st_ino ||
      named.st_dev != held.st_dev) {
    return UniqueFd();
  }
  return fd;
}

}  // namespace

Result<UniqueFd> try_lock_file(const std::filesystem::path& path, LockOpen how) {
  const int excl = how == LockOpen::kCreateNew ? O_EXCL : 0;
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | excl | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) {
    if (how == LockOpen::kCreateNew && (errno == EEXIST || errno == ENOENT)) return UniqueFd();
    return fail_errno("open " + path.string());
  }
  return lock_opened(std::move(fd), path);
}

Result<UniqueFd> try_lock_dir(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return fail_errno("open " + path.string());
  return lock_opened(std::move(fd), path);
}

}  // namespace cordon
