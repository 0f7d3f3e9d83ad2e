// `cordon mcp` over stdio as a client sees it: the real binary with its stdin and stdout on
// pipes, for the tests of the stdio transport and of a first start's audit.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "test_paths.h"

namespace cordon::testing {

using nlohmann::json;
using std::chrono::milliseconds;

// kNone: --no-audit --unverified (no report needed); kAsOperatorsDo: neither, so the
// server audits first when no report is stored (CORDON_AUDIT_DIR).
enum class Audit { kNone, kAsOperatorsDo };

// `cordon mcp -b namespace ...` with its stdin and stdout on pipes (stderr inherited:
// diagnostics), `env` added to this process's environment.
class StdioServer {
 public:
  explicit StdioServer(const std::vector<std::string>& extra, Audit audit = Audit::kNone,
                       const std::vector<std::string>& env = {}) {
    ::setenv("CORDON_PLUGIN_PATH", plugin_dir(), 1);
    int in[2];
    int out[2];
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    std::vector<std::string> args = {cli_binary(), "mcp",      "-b",   "namespace",   "-t",
                                     "10s",        "--memory", "128M", "--pool-size", "0"};
    if (audit == Audit::kNone) {
      args.emplace_back("--no-audit");
      args.emplace_back("--unverified");
    }
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    // This process's environment with `env` (NAME=VALUE) added.
    std::vector<std::string> environment = env;
    for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
    std::vector<char*> envp;
    envp.reserve(environment.size() + 1);
    for (std::string& e : environment) envp.push_back(e.data());
    envp.push_back(nullptr);
    EXPECT_EQ(::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  StdioServer(const StdioServer&) = delete;
  StdioServer& operator=(const StdioServer&) = delete;
  ~StdioServer() {
    close_stdin();
    if (from_ >= 0) ::close(from_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  void send(const std::string& text) {
    std::string_view rest = text;
    while (!rest.empty()) {
      const ssize_t n = ::write(to_, rest.data(), rest.size());
      ASSERT_GT(n, 0);
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void send(const json& message) { send(message.dump() + "\n"); }
  void close_stdin() {
    if (to_ >= 0) ::close(to_);
    to_ = -1;
  }

  // The next line of stdout, as JSON (fails the test when it is not JSON).
  std::optional<json> next(milliseconds within = milliseconds(20000)) {
    const auto end = std::chrono::steady_clock::now() + within;
    for (;;) {
      if (const std::size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        const std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        json value = json::parse(line, nullptr, /*allow_exceptions=*/false);
        EXPECT_FALSE(value.is_discarded()) << "stdout line is not JSON: " << line;
        return value;
      }
      const auto left =
          std::chrono::duration_cast<milliseconds>(end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd fd{.fd = from_, .events = POLLIN, .revents = 0};
      if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char chunk[65536];
      const ssize_t n = ::read(from_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  // The exit status once it exits within `within`, else -1.
  int wait_exit(milliseconds within) {
    const auto end = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
  std::string buffer_;
};

inline json request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

inline void initialize(StdioServer& server) {
  server.send(request(0, "initialize",
                      {{"protocolVersion", "2025-06-18"},
                       {"capabilities", json::object()},
                       {"clientInfo", {{"name", "stdio-test"}, {"version", "1"}}}}));
  const auto init = server.next();
  ASSERT_TRUE(init);
  EXPECT_EQ((*init)["result"]["serverInfo"]["name"], "cordon");
  server.send(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
}

}  // namespace cordon::testing
