// Baselines: a bare posix_spawn + waitpid of a program, stdout/stderr to /dev/null.
#pragma once

#include <string>
#include <vector>

namespace cordon::bench {

// Spawns argv[0] (an absolute path) with an empty environment and waits for it.
// Aborts the benchmark when the spawn fails: a broken baseline must not read as fast.
void spawn_and_wait(const std::vector<std::string>& argv);

// bubblewrap with flags comparable to a sandbox's (every namespace, /usr read-only, fresh
// /proc, /dev and /tmp, no capabilities) running `command`: the one-shot baseline the
// namespace backend and `cordon mcp` are measured against.
[[nodiscard]] std::vector<std::string> bwrap_argv(const std::vector<std::string>& command);

}  // namespace cordon::bench
