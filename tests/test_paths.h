// Paths the tests use, compiled in by tests/CMakeLists.txt and overridable from the
// environment, so a test binary can run from a copy of the build tree: run_unprivileged.sh
// runs the namespace suite as uid 65534 from a world-readable copy under /tmp, because the
// build tree may sit below directories that uid cannot traverse.
#pragma once

#include <cstdlib>

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
#endif

}  // namespace cordon::testing
