// Finding a system tool and running it as a bounded child (run_tool.h).
#include "cordon/proc/run_tool.h"

#include <poll.h>
#include <unistd.h>

#include <array>

#include "cordon/proc/pipe.h"
#include "cordon/proc/spawn.h"

namespace cordon::proc {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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

Result<std::string> run_tool(const std::vector<std::string>& argv, Clock::time_point until,
                             const ToolIo& io) {
  auto out_pipe = make_pipe();
  auto err_pipe = make_pipe();
  if (!out_pipe || !err_pipe) return fail(ErrorCode::kSystem, "pipe for " + argv.front());
  SpawnOptions so;
  so.path = argv.front();
  so.argv = argv;
  so.env = {std::string("PATH=") + kSystemPath};
  so.stdin_fd = io.stdin_fd;
  so.stdout_fd = io.stdout_fd >= 0 ? io.stdout_fd : out_pipe->write.get();
  so.stderr_fd = io.stderr_fd >= 0 ? io.stderr_fd : err_pipe->write.get();
  so.keep_fds = io.keep_fds;
  auto child = spawn(so);
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

}  // namespace cordon::proc
