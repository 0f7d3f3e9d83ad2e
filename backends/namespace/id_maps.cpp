#include "id_maps.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "cordon/unique_fd.h"

namespace cordon::ns {
namespace {

Status write_proc(pid_t pid, const char* file, const std::string& text) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + file;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return fail_errno("open " + path);
  // The kernel takes a map in a single write; a short write would be an error.
  const ssize_t n = ::write(fd.get(), text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size()))
    return fail_errno("write " + path + " '" + text + "'");
  return {};
}

}  // namespace

Status write_id_maps(pid_t pid, const SandboxPlan& plan) {
  if (plan.deny_setgroups) {
    if (auto st = write_proc(pid, "setgroups", "deny"); !st) return st;
  }
  if (auto st = write_proc(pid, "gid_map", map_line(plan.gid_map)); !st) return st;
  return write_proc(pid, "uid_map", map_line(plan.uid_map));
}

}  // namespace cordon::ns
