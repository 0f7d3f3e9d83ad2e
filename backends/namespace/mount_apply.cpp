// The mount steps of the filesystem plan as syscalls (bubblewrap's SetupOp, nsjail's
// mnt.cc). Runs in the sandbox's init before pivot_root, with all capabilities of its
// own user namespace and none outside it.
#include "mount_apply.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>  // ST_* flags, which statfs().f_flags uses too
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace cordon::ns {
namespace {

using policy::FsOp;

// Mount flags that the kernel locks on a mount a less privileged user namespace got from
// a more privileged one: a remount inside our user namespace that drops one of them fails
// with EPERM, so every remount carries those the mount already has.
unsigned long locked_flags(const char* path) {
  struct statfs st{};
  if (::statfs(path, &st) != 0) return 0;
  unsigned long f = 0;
  if (st.f_flags & ST_RDONLY) f |= MS_RDONLY;
  if (st.f_flags & ST_NOSUID) f |= MS_NOSUID;
  if (st.f_flags & ST_NODEV) f |= MS_NODEV;
  if (st.f_flags & ST_NOEXEC) f |= MS_NOEXEC;
  if (st.f_flags & ST_NOATIME) f |= MS_NOATIME;
  if (st.f_flags & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (st.f_flags & ST_RELATIME) f |= MS_RELATIME;
  return f;
}

// MS_REMOUNT|MS_BIND changes only this mount's flags (not the filesystem's, which a user
// namespace could not change for a host filesystem anyway).
int remount(const char* target, unsigned long flags) {
  const unsigned long all = MS_REMOUNT | MS_BIND | flags | locked_flags(target);
  return ::mount(nullptr, target, nullptr, all, nullptr) == 0 ? 0 : errno;
}

bool exists(const char* path) {
  struct stat st{};
  return ::lstat(path, &st) == 0;
}

int write_all(int fd, const char* data, std::size_t len) {
  while (len > 0) {
    const ssize_t n = ::write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    len -= static_cast<std::size_t>(n);
  }
  return 0;
}

int bind(const ChildMount& m) {
  if (m.optional && !exists(m.source)) return 0;
  // Not recursive: host submounts under a bound directory stay out. Inside a user
  // namespace the kernel refuses (EINVAL) a non-recursive bind of a tree with locked
  // submounts, since it would reveal what they cover; then bind them too.
  if (::mount(m.source, m.target, nullptr, MS_BIND, nullptr) != 0) {
    if (errno != EINVAL || ::mount(m.source, m.target, nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      return errno;
    }
  }
  // A bind ignores the flags passed with it; they take effect only through a remount.
  const unsigned long want = m.flags | (m.read_only ? MS_RDONLY : 0);
  return want != 0 ? remount(m.target, want) : 0;
}

int mask(const ChildMount& m) {
  struct stat st{};
  if (::lstat(m.target, &st) != 0) return m.optional && errno == ENOENT ? 0 : errno;
  if (S_ISDIR(st.st_mode)) {
    // An empty read-only tmpfs over the directory.
    const unsigned long f = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
    return ::mount("tmpfs", m.target, "tmpfs", f, "size=4096,mode=0555") == 0 ? 0 : errno;
  }
  // /dev/null over a file: reads as empty. The host's /dev/null is still reachable
  // (masking happens before pivot_root).
  return ::mount("/dev/null", m.target, nullptr, MS_BIND, nullptr) == 0 ? 0 : errno;
}

}  // namespace

int apply_mount(const ChildMount& m) noexcept {
  switch (m.op) {
    case FsOp::kMakePrivate:
      // Nothing mounted below may propagate to the host's namespace (the copied mounts
      // are shared peers of the host's), and nothing of the host's may appear in ours.
      return ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 ? 0 : errno;
    case FsOp::kTmpfs:
      return ::mount("tmpfs", m.target, "tmpfs", m.flags | (m.read_only ? MS_RDONLY : 0), m.data) ==
                     0
                 ? 0
                 : errno;
    case FsOp::kBind:
      return bind(m);
    case FsOp::kProc:
      // We are PID 1 of the new PID namespace, whose owner is our user namespace: this
      // procfs shows the sandbox's processes only.
      return ::mount("proc", m.target, "proc", m.flags, nullptr) == 0 ? 0 : errno;
    case FsOp::kMkdir:
      if (::mkdir(m.target, m.mode) != 0 && errno != EEXIST) return errno;
      return 0;
    case FsOp::kMkfile: {
      const int fd = ::open(m.target, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, m.mode);
      if (fd < 0) return errno;
      ::close(fd);
      return 0;
    }
    case FsOp::kWriteFile: {
      const int fd =
          ::open(m.target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, m.mode);
      if (fd < 0) return errno;
      const int err = write_all(fd, m.data, m.data_len);
      ::close(fd);
      return err;
    }
    case FsOp::kSymlink:
      return ::symlink(m.source, m.target) == 0 ? 0 : errno;
    case FsOp::kMask:
      return mask(m);
    case FsOp::kReadonly:
      if (!exists(m.target)) return m.optional ? 0 : ENOENT;
      if (::mount(m.target, m.target, nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
      return remount(m.target, MS_RDONLY | m.flags);
    case FsOp::kRemountReadonly:
      return remount(m.target, MS_RDONLY | m.flags);
    case FsOp::kPivotRoot:
      // pivot_root(".", "."): the old root ends up stacked on the new one, so no
      // directory for it is needed in the new root (pivot_root(2), "NOTES").
      if (::chdir(m.target) != 0) return errno;
      return ::syscall(SYS_pivot_root, ".", ".") == 0 ? 0 : errno;
    case FsOp::kDetachOldRoot:
      // Lazily: the host's mounts vanish from our namespace even if something still
      // holds them; nothing of the host's tree stays reachable.
      if (::umount2(".", MNT_DETACH) != 0) return errno;
      return ::chdir("/") == 0 ? 0 : errno;
  }
  return EINVAL;
}

}  // namespace cordon::ns
