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

}  // namespace

fs::path find_tool(const std::string& name) {
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

namespace {

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
  p.path = find_tool(name);
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

Result<std::string> run_tool(const std::vector<std::string>& argv, Clock::time_point until,
                             const ToolIo& io) {
  auto out_pipe = proc::make_pipe();
  auto err_pipe = proc::make_pipe();
  if (!out_pipe || !err_pipe) return fail(ErrorCode::kSystem, "pipe for " + argv.front());
  proc::SpawnOptions so;
  so.path = argv.front();
  so.argv = argv;
  so.env = {std::string("PATH=") + kSystemPath};
  so.stdin_fd = io.stdin_fd;
  so.stdout_fd = io.stdout_fd >= 0 ? io.stdout_fd : out_pipe->write.get();
  so.stderr_fd = io.stderr_fd >= 0 ? io.stderr_fd : err_pipe->write.get();
  so.keep_fds = io.keep_fds;
  auto child = proc::spawn(so);
  if (!child) return std::unexpected(child.error());
  out_pipe->write.reset();
  err_pipe->write.reset();
  std::string text[2];
  bool eof[2] = {io.stdout_fd >= 0, io.stderr_fd >= 0};
  const int fds[2] = {out_pipe->read.get(), err_pipe->read.get()};
  bool exited = false;
  while (!exited || !eof[0] || !eof[1]) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) break;
    std::array<pollfd, 3> p = {pollfd{child->pidfd(), POLLIN, 0},
                               pollfd{eof[0] ? -1 : fds[0], POLLIN, 0},
                               pollfd{eof[1] ? -1 : fds[1], POLLIN, 0}};
    if (::poll(p.data(), p.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    if ((p[0].revents & POLLIN) != 0) exited = true;
    for (int i = 0; i < 2; ++i) {
      if ((p[i + 1].revents & (POLLIN | POLLHUP)) == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i], buf, sizeof(buf));
      if (n <= 0) {
        eof[i] = true;
      } else if (text[i].size() < 65536) {
        text[i].append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  // "runc delete": the tool and its subcommand (the first word that is not an option or
  // an option's value).
  std::string what = fs::path(argv.front()).filename().string();
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (argv[i].starts_with("-") || argv[i - 1] == "--root") continue;
    what += " " + argv[i];
    break;
  }
  // A child still running is killed and reaped by the ChildProcess destructor.
  if (!exited) return fail(ErrorCode::kTimeout, what + " did not finish in time");
  auto info = child->wait();
  if (!info) return std::unexpected(info.error());
  if (!info->exited() || info->exit_code() != 0) {
    std::string& err = text[1];
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return fail(ErrorCode::kSystem,
                what + " failed (status " + std::to_string(info->status) + "): " + err);
  }
  return std::move(text[0]);
}

Status RuntimeCli::call(const std::vector<std::string>& args, Clock::time_point until,
                        const std::vector<int>& keep_fds, int stdin_fd, int stdout_fd,
                        int stderr_fd) const {
  std::vector<std::string> full = argv(args);
  // The subcommand names the failure ("runc delete failed ...").
  auto out = run_tool(full, until, ToolIo{keep_fds, stdin_fd, stdout_fd, stderr_fd});
  if (!out) return std::unexpected(out.error());
  return {};
}

Status RuntimeCli::destroy(const std::string& id, Clock::time_point until) const {
  // delete --force kills a container that still runs (SIGKILL to its init) and waits.
  auto st = call({"delete", "--force", id}, until);
  if (!st && st.error().message.find("does not exist") != std::string::npos) return {};
  return st;
}

}  // namespace cordon::oci
