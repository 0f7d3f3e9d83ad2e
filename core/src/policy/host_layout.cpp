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

Result<HostLayout> probe_host_layout() {
  HostLayout layout;
  for (const char* path : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    auto e = probe_entry(path);
    if (!e) return std::unexpected(e.error());
    if (e->kind != HostEntry::Kind::kAbsent) layout.top_level.push_back(std::move(*e));
  }
  struct stat st{};
  layout.has_usr_local = ::stat("/usr/local", &st) == 0 && S_ISDIR(st.st_mode);
  layout.has_ld_so_cache = ::stat("/etc/ld.so.cache", &st) == 0 && S_ISREG(st.st_mode);
  layout.has_etc_alternatives = ::stat("/etc/alternatives", &st) == 0 && S_ISDIR(st.st_mode);
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
