// Finding the runtime and running its subcommands as bounded children.
#include "runtime_cli.h"

#include <linux/magic.h>
#include <poll.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <array>

#include "cordon/proc/pipe.h"
#include "runsc_platform.h"

namespace cordon::oci {
namespace {

namespace fs = std::filesystem;

}  // namespace

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

RuntimeProbe probe_runtime(const std::string& name, const std::string& runsc_platform) {
  RuntimeProbe p;
  p.name = name;
  if (name != "runc" && name != "crun" && name != "runsc") {
    p.reason = "unknown OCI runtime '" + name + "' (runc, crun or runsc)";
    return p;
  }
  p.path = find_tool(name);
  if (p.path.empty()) {
    p.reason = name + " is not installed (not found on " + proc::kSystemPath + ")";
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
    const RunscPlatform platform = runsc_platform_for(p.path, runsc_platform);
    if (!platform.usable) {
      p.reason = "runsc (gVisor) at " + p.path.string() + ": " + platform.reason;
      return p;
    }
    p.platform = platform.platform;
    p.usable = true;
    p.reason = "runsc (gVisor, user-space kernel) at " + p.path.string() + ", " + platform.reason;
    return p;
  }
  p.usable = true;
  p.reason = name + " at " + p.path.string();
  return p;
}

std::vector<std::string> runtime_global_args(const RuntimeProbe& probe, bool network_namespace,
                                             bool seccomp) {
  if (probe.name != "runsc") return {};
  std::vector<std::string> out = {"--platform=" + probe.platform,
                                  network_namespace ? "--network=none" : "--network=host",
                                  "--host-uds=open"};
  if (seccomp) out.emplace_back("--oci-seccomp");
  return out;
}

std::vector<std::string> RuntimeCli::argv(const std::vector<std::string>& args) const {
  std::vector<std::string> out = {binary_.string(), "--root", state_root_.string()};
  out.insert(out.end(), global_args_.begin(), global_args_.end());
  out.insert(out.end(), args.begin(), args.end());
  return out;
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

Result<proc::ChildProcess> RuntimeCli::start(const std::vector<std::string>& args, int stdin_fd,
                                             int stdout_fd, int stderr_fd,
                                             const std::filesystem::path& subreaper) const {
  proc::SpawnOptions so;
  so.argv = argv(args);
  if (!subreaper.empty()) {
    so.argv.insert(so.argv.begin(), {subreaper.string(), "subreaper", "--"});
  }
  so.path = so.argv.front();
  // As run_tool() runs every tool: the system PATH and nothing else of ours.
  so.env = {std::string("PATH=") + proc::kSystemPath};
  so.stdin_fd = stdin_fd;
  so.stdout_fd = stdout_fd;
  so.stderr_fd = stderr_fd;
  return proc::spawn(so);
}

Status RuntimeCli::destroy(const std::string& id, Clock::time_point until) const {
  // delete --force kills a container that still runs (SIGKILL to its init) and waits.
  auto st = call({"delete", "--force", id}, until);
  if (!st && st.error().message.find("does not exist") != std::string::npos) return {};
  return st;
}

}  // namespace cordon::oci
