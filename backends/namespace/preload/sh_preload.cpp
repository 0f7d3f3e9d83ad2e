// cordon-sh-preload.so: how a prestarted `sh -c CODE` receives its code
// (NamespaceOptions::prestart_sh, docs/ARCHITECTURE.md "Shells started ahead").
//
// A shell cannot be handed its -c string after it started, and what a sh run costs is
// almost all before the shell's main(): the exec and the dynamic loader (mapping and
// relocating libc, ~60 page faults here). So the pool starts the run's own command,
// `sh -c <placeholder>`, with this library preloaded (LD_PRELOAD=/proc/self/fd/5, the
// library being fd 5: nothing of it is on the sandbox's filesystem). Its constructor runs
// after the loader and libc's start-up and before the shell's main(): it says it is ready on
// fd 4, blocks reading the code from fd 3 until EOF (the init writes it there when the run's
// order comes), closes fds 3, 4 and 5, puts the code in argv[2] (the array main() receives)
// and removes LD_PRELOAD from the environment (the pointer from environ, and the string's
// bytes, so /proc/self/environ does not show it either). main() then runs as it would have
// for `sh -c CODE`: same argv, environment, fds, cwd, rlimits, signal state; the shell's
// children never see the library.
//
// What still differs (pinned by namespace_prestart_test): /proc/self/cmdline shows the
// placeholder; /proc/self/maps lists this library; /proc/self/environ ends in NUL bytes where
// LD_PRELOAD was; the process started earlier (its start time, not the code's CPU time).
//
// Plain C library calls only (linked without libstdc++), and nothing on an unexpected start:
// without the -c form, or when fd 4 or fd 3 fail, it exits 127 before main(), so the pool's
// prestart fails (no ready byte) and runs take the plain pool.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kCodeFd = 3;     // cordon/proc/ns_init_channel.h: kPrestartCodeFd
constexpr int kReadyFd = 4;    // kPrestartReadyFd
constexpr int kLibraryFd = 5;  // kPrestartPreloadFd
constexpr char kVariable[] = "LD_PRELOAD=";

char* read_code() {
  std::size_t capacity = 4096;
  std::size_t length = 0;
  char* code = static_cast<char*>(std::malloc(capacity));
  if (code == nullptr) return nullptr;
  for (;;) {
    if (length + 1 == capacity) {
      capacity *= 2;
      char* grown = static_cast<char*>(std::realloc(code, capacity));
      if (grown == nullptr) return nullptr;
      code = grown;
    }
    const ssize_t n = ::read(kCodeFd, code + length, capacity - length - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return nullptr;
    if (n == 0) break;
    length += static_cast<std::size_t>(n);
  }
  code[length] = '\0';  // as in argv: a NUL in the code ends it there
  return code;
}

// environ's LD_PRELOAD entry goes (unsetenv keeps the others' order) and its bytes are
// cleared where the kernel placed them (the block /proc/self/environ reads).
void forget_preload() {
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, kVariable, sizeof kVariable - 1) == 0) {
      char* text = *e;
      ::unsetenv("LD_PRELOAD");
      std::memset(text, 0, std::strlen(text));
      return;
    }
  }
}

__attribute__((constructor)) void take_code(int argc, char** argv, char** /*envp*/) {
  if (argc != 3 || std::strcmp(argv[1], "-c") != 0) ::_exit(127);
  const char ready = 'r';
  if (::write(kReadyFd, &ready, 1) != 1) ::_exit(127);
  ::close(kReadyFd);
  char* code = read_code();
  if (code == nullptr) ::_exit(127);
  ::close(kCodeFd);
  ::close(kLibraryFd);
  argv[2] = code;
  forget_preload();
  errno = 0;
}

}  // namespace
