// Checks of the sandbox's root filesystem shared by the namespace and container backend
// tests: both build it from one plan (core/policy/fs_plan), so both must pass the same.
#pragma once

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon::testing {

// The host's commands under /usr/bin that are Debian alternatives (symlinks into
// /etc/alternatives) and resolve on the host: each must resolve inside the sandbox too.
inline std::vector<std::string> host_alternative_commands() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/bin", ec)) {
    if (!e.is_symlink(ec)) continue;
    const fs::path link = fs::read_symlink(e.path(), ec);
    if (ec || !link.string().starts_with("/etc/alternatives/")) continue;
    if (fs::exists(e.path(), ec)) out.push_back(e.path().string());
  }
  return out;
}

// Shell code that prints "awk-ok", where `which` finds sh, "unresolved <path>" for each
// of `commands` that does not resolve, and "checked <n>" at the end.
inline std::string alternatives_probe(const std::vector<std::string>& commands) {
  std::string code = "awk 'BEGIN { print \"awk-ok\" }'\nwhich sh\nn=0\nfor f in";
  for (const auto& c : commands) code += " " + c;
  code += "; do n=$((n+1)); [ -e \"$f\" ] || echo \"unresolved $f\"; done\necho checked $n\n";
  return code;
}

// awk, which and every alternative of host_alternative_commands() work through `run`
// (the backend under test), and /etc/alternatives takes no write.
inline void expect_alternatives_resolve(const std::function<RunResult(const RunRequest&)>& run) {
  const auto commands = host_alternative_commands();
  RunRequest probe;
  probe.code = alternatives_probe(commands);
  const RunResult r = run(probe);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  EXPECT_NE(r.stdout_data.find("awk-ok\n"), std::string::npos) << r.stderr_data;
  EXPECT_NE(r.stdout_data.find("bin/sh\n"), std::string::npos) << r.stderr_data;
  EXPECT_EQ(r.stdout_data.find("unresolved"), std::string::npos) << r.stdout_data;
  EXPECT_NE(r.stdout_data.find("checked " + std::to_string(commands.size()) + "\n"),
            std::string::npos)
      << r.stdout_data;
  RunRequest write;
  write.code = "ln -s /tmp/x /etc/alternatives/cordon-probe && echo wrote";
  EXPECT_EQ(run(write).stdout_data, "");
  std::error_code ec;
  EXPECT_FALSE(std::filesystem::exists("/etc/alternatives/cordon-probe", ec));
}

// Runs `body` on a thread of its own mount namespace in which a writable tmpfs (mode
// 1777, holding a file "marker") is mounted over `dir`. unshare(CLONE_NEWNS) from a thread
// gives that thread alone a new namespace (CLONE_FS comes with it, which a thread may
// unshare), and processes it starts inherit it; the namespace and its mounts vanish when
// the thread ends, so nothing is ever mounted on the host. Returns an error, or "".
inline std::string with_writable_submount(const std::string& dir,
                                          const std::function<void()>& body) {
  std::string error;
  std::thread worker([&] {
    if (::unshare(CLONE_NEWNS) != 0) {
      error = std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
      return;
    }
    // Nothing mounted here may propagate back to the host's namespace.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
      error = std::string("make / a slave: ") + std::strerror(errno);
      return;
    }
    if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=1777") != 0) {
      error = "mount tmpfs on " + dir + ": " + std::strerror(errno);
      return;
    }
    std::ofstream(dir + "/marker") << "marker\n";
    body();
    ::umount2(dir.c_str(), MNT_DETACH);
  });
  worker.join();
  return error;
}

// Shell code for with_writable_submount's `dir`: "visible" when the submount's marker can
// be read, then "wrote" or "refused" for a write through it.
inline std::string submount_write_probe(const std::string& dir) {
  return "cat " + dir + "/marker >/dev/null 2>&1 && echo visible\n" + "if echo x > " + dir +
         "/probe; then echo wrote; else echo refused; fi\n";
}

// A directory under /usr (bound read-only into every sandbox) to mount over.
inline std::string usr_submount_dir() {
  std::error_code ec;
  return std::filesystem::is_directory("/usr/share/doc", ec) ? "/usr/share/doc" : "/usr/share";
}

}  // namespace cordon::testing
