// Paths the tests use, compiled in by tests/CMakeLists.txt and overridable from the
// environment, so a test binary can run from a copy of the build tree: run_unprivileged.sh
// runs the namespace suite as uid 65534 from a world-readable copy under /tmp, because the
// build tree may sit below directories that uid cannot traverse.
#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace cordon::testing {

inline const char* env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : fallback;
}

// Where the backend plugins are: $CORDON_TEST_PLUGIN_DIR, else the build tree's.
inline const char* plugin_dir() { return env_or("CORDON_TEST_PLUGIN_DIR", CORDON_TEST_PLUGIN_DIR); }

#ifdef CORDON_CLI_BINARY
// The `cordon` binary: $CORDON_TEST_CLI_BINARY, else the build tree's.
inline const char* cli_binary() { return env_or("CORDON_TEST_CLI_BINARY", CORDON_CLI_BINARY); }

// Starts `cordon <args...>` with this process's environment, as a child the test kills or
// waits for; 0 when it could not be started.
inline pid_t spawn_cli(const std::vector<std::string>& args) {
  std::vector<char*> argv = {const_cast<char*>(cli_binary())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  return ::posix_spawn(&pid, cli_binary(), nullptr, nullptr, argv.data(), environ) == 0 ? pid : 0;
}
#endif

}  // namespace cordon::testing
