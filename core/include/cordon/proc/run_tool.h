// Running a system tool (an OCI runtime, an engine such as podman) to completion as a
// bounded child: found on a fixed system PATH, started with nothing of the caller's
// environment but that PATH, its output captured, killed at a deadline. Used by the
// container backend (runc, podman) and by `cordon environment add NAME IMAGE` (podman).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cordon/error.h"

namespace cordon::proc {

// The PATH tools are looked up on and run with.
inline constexpr const char* kSystemPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// `name` on kSystemPath, or an empty path.
[[nodiscard]] std::filesystem::path find_tool(const std::string& name);

// Runs a tool (argv[0] absolute) to completion with PATH=kSystemPath and nothing else in
// its environment; returns its stdout, or fails with its stderr when it exits non-zero.
// Kills it at `until`. `stdin_fd`/`stdout_fd`/`stderr_fd` >= 0 replace the captured pipes.
struct ToolIo {
  std::vector<int> keep_fds;
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
};
[[nodiscard]] Result<std::string> run_tool(const std::vector<std::string>& argv,
                                           std::chrono::steady_clock::time_point until,
                                           const ToolIo& io = {});

}  // namespace cordon::proc
