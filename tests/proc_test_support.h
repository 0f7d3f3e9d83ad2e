// Small helpers shared by the process-layer and subprocess backend tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace cordon::testing {

inline std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// True when `pid` is gone, a zombie, or no longer the process we meant (its comm changed).
// Zombies count as dead: PID 1 on this machine kind does not reap, so an orphan that
// cgroup.kill killed stays a zombie of PID 1 forever; it runs no code and holds nothing.
inline bool process_dead(pid_t pid, const std::string& comm) {
  const auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  const auto open = stat->find('(');
  const auto close = stat->rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= stat->size()) {
    return true;
  }
  if (stat->substr(open + 1, close - open - 1) != comm) return true;
  return (*stat)[close + 2] == 'Z';
}

// Waits (bounded) for process_dead: kills are asynchronous.
inline bool eventually_dead(pid_t pid, const std::string& comm,
                            std::chrono::milliseconds bound = std::chrono::seconds(3)) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (!process_dead(pid, comm)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

inline long status_kb(const char* field) {
  const auto text = read_file("/proc/self/status");
  if (!text) return -1;
  const auto at = text->find(field);
  if (at == std::string::npos) return -1;
  return std::stol(text->substr(at + std::string(field).size()));
}

// A private directory for a test, removed (shallowly) at the end.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    char tmpl[] = "/tmp/proc-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~ScratchDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

// A pid that is certainly dead: a child we reaped ourselves.
inline pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

// Every path under `dir`, relative to it: what a test compares to see that nothing was
// made or removed there.
inline std::set<std::string> tree_of(const std::filesystem::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    out.insert(std::filesystem::relative(e.path(), dir, ec).string());
  }
  return out;
}

}  // namespace cordon::testing
