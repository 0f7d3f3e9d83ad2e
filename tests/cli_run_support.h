// The real `cordon` binary run as a user would run it, for the tests of its commands
// (cli_test, session_cli_test): its three streams through pipes, its exit status.
// CORDON_CLI_BINARY is the binary (tests/CMakeLists.txt).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace cordon::testing {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

struct Ran {
  int status = -1;  // exit status, or 128+N when cordon itself died of signal N
  std::string out;
  std::string err;
  milliseconds elapsed{0};
};

struct RunSpec {
  std::vector<std::string> args;
  std::optional<std::string> stdin_data;  // unset: stdin is /dev/null
  std::vector<std::string> extra_env;     // NAME=VALUE added to cordon's environment
  std::optional<std::string> signal_on;   // send SIGTERM to cordon once stdout has this
};

// posix_spawn of the binary with pipes for all three streams, drained with poll so a
// chatty child can never deadlock the test.
// `stdin_path`: stdin opened from this file instead (spec.stdin_data unused).
inline Ran run_cordon(const RunSpec& spec, const char* stdin_path = nullptr) {
  std::array<int, 2> in{}, out{}, err{};
  EXPECT_EQ(::pipe2(in.data(), O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(out.data(), O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(err.data(), O_CLOEXEC), 0);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdin_path != nullptr) {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, stdin_path, O_RDONLY, 0);
  } else if (spec.stdin_data) {
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);

  std::vector<std::string> argv_storage{CORDON_CLI_BINARY};
  argv_storage.insert(argv_storage.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) env_storage.emplace_back(*e);
  env_storage.insert(env_storage.end(), spec.extra_env.begin(), spec.extra_env.end());
  std::vector<char*> envp;
  for (std::string& entry : env_storage) envp.push_back(entry.data());
  envp.push_back(nullptr);

  const auto start = steady_clock::now();
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, CORDON_CLI_BINARY, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  Ran ran;
  if (rc != 0) {
    ADD_FAILURE() << "posix_spawn " << CORDON_CLI_BINARY << ": " << rc;
    ::close(in[1]);
    ::close(out[0]);
    ::close(err[0]);
    return ran;
  }
  if (spec.stdin_data) {
    // Small inputs only: they fit in the pipe buffer, so this never blocks.
    EXPECT_EQ(::write(in[1], spec.stdin_data->data(), spec.stdin_data->size()),
              static_cast<ssize_t>(spec.stdin_data->size()));
  }
  ::close(in[1]);

  bool signalled = false;
  std::array<pollfd, 2> fds{pollfd{out[0], POLLIN, 0}, pollfd{err[0], POLLIN, 0}};
  std::array<std::string*, 2> sinks{&ran.out, &ran.err};
  int open_streams = 2;
  while (open_streams > 0) {
    const int ready = ::poll(fds.data(), fds.size(), /*timeout=*/50);
    if (spec.signal_on && !signalled && ran.out.find(*spec.signal_on) != std::string::npos) {
      ::kill(pid, SIGTERM);
      signalled = true;
    }
    if (ready <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      std::array<char, 4096> buffer{};
      const ssize_t n = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (n > 0) {
        sinks[i]->append(buffer.data(), static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_streams;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ran.elapsed = std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
  ran.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return ran;
}

}  // namespace cordon::testing
