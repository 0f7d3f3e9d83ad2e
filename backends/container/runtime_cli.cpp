// Finding the runtime and running its subcommands as bounded children.
#include "runtime_cli.h"

#include <linux/magic.h>
#include <poll.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <array>

#include "cordon/proc/pipe.h"

namespace cordon::oci {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

fs::path find_on_path(const std::string& name) {
  std::string_view rest = kSystemPath;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const fs::path dir(std::string(rest.substr(0, colon)));
    rest = colon == std::string_view::npos ? "" : rest.substr(colon + 1);
    const fs::path candidate = dir / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

bool is_fs(const char* path, decltype(statfs::f_type) magic) {
  struct statfs s{};
  return ::statfs(path, &s) == 0 && s.f_type == magic;
}

}  // namespace

bool cgroup_hybrid_host() {
  return is_fs("/sys/fs/cgroup", TMPFS_MAGIC) &&
         is_fs("/sys/fs/cgroup/unified", CGROUP2_SUPER_MAGIC);
}

RuntimeProbe probe_runtime(const std::string& name) {
  RuntimeProbe p;
  p.name = name;
  if (name != "runc" && name != "crun" && name != "runsc") {
    p.reason = "unknown OCI runtime '" + name + "' (runc, crun or runsc)";
    return p;
  }
  p.path = find_on_path(name);
  if (p.path.empty()) {
    p.reason = name + " is not installed (not found on " + kSystemPath + ")";
    return p;
  }
  if (::geteuid() != 0) {
    p.reason = "cordon drives " + name + " as root only (rootless containers are not supported)";
    return p;
  }
  if (name == "crun" && cgroup_hybrid_host()) {
    p.reason = "crun refuses cgroup v1 hybrid hosts (\"cgroups in hybrid mode not supported\")";
    return p;
  }
  if (name == "runsc") {
    p.reason = "runsc (gVisor) found at " + p.path.string() +
               " but this version drives runc and crun only";
    return p;
  }
  p.usable = true;
  p.reason = name + " at " + p.path.string();
  return p;
}

std::vector<std::string> RuntimeCli::argv(const std::vector<std::string>& args) const {
  std::vector<std::string> out = {binary_.string(), "--root", state_root_.string()};
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

Status RuntimeCli::call(const std::vector<std::string>& args, Clock::time_point until,
                        const std::vector<int>& keep_fds, int stdin_fd, int stdout_fd,
                        int stderr_fd) const {
  auto err_pipe = proc::make_pipe();
  if (!err_pipe) return std::unexpected(err_pipe.error());
  proc::SpawnOptions so;
  so.path = binary_.string();
  so.argv = argv(args);
  so.env = {std::string("PATH=") + kSystemPath};
  so.stdin_fd = stdin_fd;
  so.stdout_fd = stdout_fd;
  so.stderr_fd = stderr_fd >= 0 ? stderr_fd : err_pipe->write.get();
  so.keep_fds = keep_fds;
  auto child = proc::spawn(so);
  if (!child) return std::unexpected(child.error());
  err_pipe->write.reset();
  std::string err;
  bool eof = stderr_fd >= 0;
  bool exited = false;
  while (!exited || !eof) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) break;
    std::array<pollfd, 2> fds = {pollfd{child->pidfd(), POLLIN, 0},
                                 pollfd{eof ? -1 : err_pipe->read.get(), POLLIN, 0}};
    if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    if ((fds[0].revents & POLLIN) != 0) exited = true;
    if ((fds[1].revents & (POLLIN | POLLHUP)) != 0) {
      char buf[4096];
      const ssize_t n = ::read(err_pipe->read.get(), buf, sizeof(buf));
      if (n <= 0) {
        eof = true;
      } else if (err.size() < 16384) {
        err.append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  const std::string what =
      args.empty() ? binary_.filename().string() : binary_.filename().string() + " " + args.front();
  if (!exited) {
    // The ChildProcess destructor kills and reaps it.
    return fail(ErrorCode::kTimeout, what + " did not finish in time");
  }
  auto info = child->wait();
  if (!info) return std::unexpected(info.error());
  if (!info->exited() || info->exit_code() != 0) {
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return fail(ErrorCode::kSystem,
                what + " failed (status " + std::to_string(info->status) + "): " + err);
  }
  return {};
}

Status RuntimeCli::destroy(const std::string& id, Clock::time_point until) const {
  // kill fails when the container has already stopped: only delete's answer matters.
  (void)call({"kill", id, "KILL"}, until);
  auto st = call({"delete", "--force", id}, until);
  if (!st && st.error().message.find("does not exist") != std::string::npos) return {};
  return st;
}

}  // namespace cordon::oci
