// Whole-suite leftover check: `suite_leftovers save FILE` before every other test and
// `suite_leftovers compare FILE` after all of them (a CTest fixture, tests/CMakeLists.txt).
// After the whole suite no process, run directory or cgroup of cordon's may remain that
// was not there before.
//
// What counts as cordon's:
//  - live (non-zombie) processes in a cgroup named cordon-*, any hierarchy; cordon's own
//    helpers (cordon-reaper, cordon-init); and processes carrying CORDON_SUITE_MARK in
//    their environment (every test binary and `cordon` CLI started by CTest: the code they
//    run never inherits it, which is the point). Zombies are left out: on this machine
//    kind PID 1 never reaps, so killed orphans stay zombies; they run and hold nothing.
//  - directories named cordon-* in /tmp, /dev/shm and $TMPDIR;
//  - cgroups named cordon-* anywhere under /sys/fs/cgroup (depth-limited walk).
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

// "" when unreadable. A process can exit between listing /proc and reading its files;
// libstdc++'s filebuf then throws from underflow (ESRCH), which must not abort the check.
std::string read_file(const fs::path& path) {
  try {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  } catch (const std::exception&) {
    return {};
  }
}

void processes(std::set<std::string>& out) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (pid == std::to_string(::getpid())) continue;
    const std::string stat = read_file(entry.path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z') continue;
    const auto open = stat.find('(');
    const std::string comm = stat.substr(open + 1, close - open - 1);
    const std::string cgroup = read_file(entry.path() / "cgroup");
    const std::string environ = read_file(entry.path() / "environ");
    const bool in_run_cgroup = cgroup.find("/cordon-") != std::string::npos;
    const bool helper = comm == "cordon-reaper" || comm == "cordon-init";
    const bool marked = environ.find("CORDON_SUITE_MARK=") != std::string::npos;
    if (in_run_cgroup || helper || marked) out.insert("process " + pid + " " + comm);
  }
}

void dirs(const fs::path& parent, std::set<std::string>& out) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename();
    if (name.starts_with("cordon-") && !name.starts_with("cordon-suite-")) {
      out.insert("dir " + entry.path().string());
    }
  }
}

void cgroups(const fs::path& dir, int depth, std::set<std::string>& out) {
  if (depth > 6) return;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    const std::string name = entry.path().filename();
    if (name.starts_with("cordon-")) out.insert("cgroup " + entry.path().string());
    cgroups(entry.path(), depth + 1, out);
  }
}

std::set<std::string> snapshot() {
  std::set<std::string> out;
  processes(out);
  dirs("/tmp", out);
  dirs("/dev/shm", out);
  if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir != nullptr && tmpdir[0] == '/') {
    dirs(tmpdir, out);
  }
  cgroups("/sys/fs/cgroup", 0, out);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: suite_leftovers save|compare FILE\n";
    return 2;
  }
  const std::string mode = argv[1];
  const fs::path file = argv[2];
  if (mode == "save") {
    std::ofstream out(file);
    for (const auto& line : snapshot()) out << line << '\n';
    std::cout << "suite_leftovers: saved " << file << '\n';
    return out ? 0 : 1;
  }
  if (mode != "compare") return 2;
  std::set<std::string> before;
  std::istringstream in(read_file(file));
  for (std::string line; std::getline(in, line);) before.insert(line);
  // Teardown of the last runs (a cgroup's rmdir after its last process died) may lag a
  // little behind the tests' end: look again for up to 5 s before calling it a leftover.
  std::set<std::string> extra;
  for (int attempt = 0; attempt < 50; ++attempt) {
    extra.clear();
    for (const auto& line : snapshot()) {
      if (!before.contains(line)) extra.insert(line);
    }
    if (extra.empty()) break;
    ::usleep(100 * 1000);
  }
  for (const auto& line : extra) std::cout << "leftover: " << line << '\n';
  std::cout << "suite_leftovers: " << extra.size() << " leftovers\n";
  return extra.empty() ? 0 : 1;
}
