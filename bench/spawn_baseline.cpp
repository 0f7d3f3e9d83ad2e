#include "spawn_baseline.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

namespace cordon::bench {

void spawn_and_wait(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char* envp[] = {nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    std::fprintf(stderr, "bench: posix_spawn %s failed: %d\n", args[0], rc);
    std::exit(2);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench: %s did not exit 0 (status %d)\n", args[0], status);
    std::exit(2);
  }
}

std::vector<std::string> bwrap_argv(const std::vector<std::string>& command) {
  std::vector<std::string> argv = {"/usr/bin/bwrap", "--unshare-all", "--die-with-parent",
                                   "--new-session",  "--ro-bind",     "/usr",
                                   "/usr",           "--symlink",     "usr/bin",
                                   "/bin",           "--symlink",     "usr/lib",
                                   "/lib",           "--symlink",     "usr/lib64",
                                   "/lib64",         "--proc",        "/proc",
                                   "--dev",          "/dev",          "--tmpfs",
                                   "/tmp",           "--cap-drop",    "ALL"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace cordon::bench
