// Run as PID 1 of a private PID namespace (`unshare --pid --fork --mount-proc`) by
// orphan_reap_test (issue #40, item 3): a fork bomb through one isolating backend, then the
// namespace's zombies, which this /proc shows alone, counted until none is left or 3 s pass.
//   orphan_reap_probe <pid1-mode> <backend> <runtime dir>
// pid1-mode: "cordon": as cordon's main does (pid1_init.h); "never-reaps": PID 1 waits for
// its one child and reaps nothing else, like this machine's PID 1, and the run happens in
// that child. backend: namespace, runc or runsc. Prints the zombies left; exit 0 when none,
// 1 when some stay, 77 when the backend is not available here, 2 on a usage error.
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "container_backend.h"
#include "cordon/proc/pid1_init.h"
#include "namespace_backend.h"

namespace {

using namespace std::chrono_literals;

// "pid ppid comm" of every zombie this /proc shows.
std::vector<std::string> zombies() {
  std::vector<std::string> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in("/proc/" + name + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z') continue;
    std::istringstream rest(stat.substr(paren + 4));
    std::string ppid;
    rest >> ppid;
    const auto open = stat.find('(');
    out.push_back(name + " " + ppid + " " + stat.substr(open + 1, paren - open - 1));
  }
  ::closedir(dir);
  return out;
}

std::unique_ptr<cordon::Backend> make_backend(const std::string& name, const std::string& dir) {
  if (name == "namespace") return std::make_unique<cordon::ns::NamespaceBackend>();
  cordon::oci::ContainerOptions options;
  options.runtime = name;
  options.runtime_dir = dir;
  return std::make_unique<cordon::oci::ContainerBackend>(options);
}

int probe(const std::string& backend_name, const std::string& dir) {
  auto backend = make_backend(backend_name, dir);
  const cordon::Probe p = backend->probe();
  if (!p.available) {
    std::printf("unavailable: %s\n", p.reason.c_str());
    return 77;
  }
  cordon::RunRequest req;
  req.language = cordon::Language::kBash;
  req.code = "bomb() { bomb | bomb & }; bomb; sleep 2";
  req.timeout = 4s;
  // Bounded by the process limit; gVisor's sandbox needs more host threads to start.
  req.limits.max_processes = backend_name == "runsc" ? 128 : 32;
  const cordon::RunResult r = backend->run(req, cordon::CancelToken(), nullptr);
  if (r.outcome == cordon::Outcome::kSandboxError) {
    std::printf("sandbox error: %s\n", r.error.value_or("").c_str());
    return 3;
  }
  std::printf("run: %s, exit %d, signal %d, %lld ms\n",
              std::string(cordon::to_string(r.outcome)).c_str(), r.exit_code, r.signal,
              static_cast<long long>(r.wall_ms));
  backend.reset();  // what an instance leaves at its end is part of the question
  std::vector<std::string> left = zombies();
  for (int i = 0; i < 30 && !left.empty(); ++i) {
    std::this_thread::sleep_for(100ms);
    left = zombies();
  }
  for (const auto& z : left) std::printf("zombie: %s\n", z.c_str());
  return left.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || ::getpid() != 1) return 2;
  const std::string mode = argv[1];
  if (mode == "cordon") {
    cordon::proc::reap_orphans_if_pid1();
    return probe(argv[2], argv[3]);
  }
  if (mode != "never-reaps") return 2;
  const pid_t child = ::fork();
  if (child < 0) return 2;
  if (child == 0) return probe(argv[2], argv[3]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
