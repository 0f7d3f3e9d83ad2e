// Probing how the host lays out the paths the filesystem plan mirrors.
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <cstdlib>
#include <memory>

#include "cordon/policy/fs_plan.h"

namespace cordon::policy {
namespace {

Result<HostEntry> probe_entry(const std::string& path) {
  HostEntry e{path, HostEntry::Kind::kAbsent, {}};
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return e;
    return fail_errno("lstat " + path);
  }
  if (S_ISLNK(st.st_mode)) {
    std::array<char, PATH_MAX> buf{};
    const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) return fail_errno("readlink " + path);
    e.kind = HostEntry::Kind::kSymlink;
    e.link_target.assign(buf.data(), static_cast<std::size_t>(n));
  } else if (S_ISDIR(st.st_mode)) {
    e.kind = HostEntry::Kind::kDirectory;
  }
  return e;
}

}  // namespace

Result<HostLayout> probe_host_layout(const std::string& root) {
  const std::string prefix = root == "/" ? "" : root;  // "" too: the host's
  HostLayout layout;
  for (const char* path : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    auto e = probe_entry(prefix + path);
    if (!e) return std::unexpected(e.error());
    e->path = path;  // as the sandbox sees it
    if (e->kind != HostEntry::Kind::kAbsent) layout.top_level.push_back(std::move(*e));
  }
  // Below an environment's root, lstat: an absolute symlink there would lead into the
  // host's tree, so only real directories and files are bound. The host's own may be
  // symlinks (the bind follows them to the host's file, which is what is meant).
  const auto is = [&](const char* path, mode_t type) {
    struct stat st{};
    const std::string full = prefix + path;
    const int rc = prefix.empty() ? ::stat(full.c_str(), &st) : ::lstat(full.c_str(), &st);
    return rc == 0 && (st.st_mode & S_IFMT) == type;
  };
  if (!prefix.empty() && !is("/usr", S_IFDIR)) {
    return fail(ErrorCode::kInvalidArgument,
                "environment " + root + " has no /usr directory (a symlink is not taken)");
  }
  layout.has_usr_local = is("/usr/local", S_IFDIR);
  layout.has_ld_so_cache = is("/etc/ld.so.cache", S_IFREG);
  layout.has_etc_alternatives = is("/etc/alternatives", S_IFDIR);
  return layout;
}

Result<ExtraPath> describe_extra_path(const std::string& path) {
  // Resolve symlinks so the bind target is where the data really is; the host's own
  // top-level symlinks (/lib -> usr/lib) are recreated by the plan, so the path the
  // user typed keeps working inside.
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  if (!real) return fail_errno("extra read-only path " + path);
  struct stat st{};
  if (::stat(real.get(), &st) != 0) return fail_errno("stat " + std::string(real.get()));
  return ExtraPath{real.get(), S_ISDIR(st.st_mode)};
}

}  // namespace cordon::policy
