// The one process-limit rule (cordon/result.h, apply_termination), checked end to end on
// each backend that enforces a process limit: a run that failed after a fork was refused
// at the ceiling exceeded the process limit; one that copes and exits 0 succeeded.
// Never through the subprocess backend (it enforces no process limit).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>

#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon::testing {

// `max_processes`: the ceiling asked for (50, or the backend's least). `sandbox_ends`: the
// code cannot cope with a refused fork because the whole sandbox ends at the ceiling (gVisor's
// sentry), so only the first half of the rule applies.
inline void expect_one_process_limit_rule(const std::function<RunResult(const RunRequest&)>& run,
                                          std::uint64_t max_processes = 50,
                                          bool sandbox_ends = false) {
  RunRequest fails;
  fails.code = "for i in $(seq 1000); do sleep 2 & done; wait";  // dash: "Cannot fork", exit 2
  fails.timeout = std::chrono::seconds(20);
  fails.limits.max_processes = max_processes;
  RunResult r = run(fails);
  // The rule needs the pids controller's count of refused forks; an RLIMIT_NPROC ceiling
  // (the namespace backend run by an ordinary user on a v1 host) counts nothing, so there
  // the run keeps the code's own outcome, as README.md says.
  const auto processes = std::ranges::find(r.enforced, Aspect::kProcesses, &Enforced::aspect);
  ASSERT_NE(processes, r.enforced.end()) << "the process limit was not enforced";
  if (processes->mechanism.find("RLIMIT_NPROC") != std::string::npos) {
    EXPECT_EQ(r.outcome, Outcome::kFailed) << r.error.value_or("") << r.stderr_data;
    EXPECT_EQ(r.limit, std::nullopt);
  } else {
    EXPECT_EQ(r.outcome, Outcome::kLimitExceeded) << r.error.value_or("") << r.stderr_data;
    EXPECT_EQ(r.limit, LimitKind::kProcesses);
  }
  if (sandbox_ends) return;
  RunRequest copes = fails;
  copes.language = Language::kPython;
  copes.code =
      "import os, time\ntry:\n    for _ in range(1000):\n        if os.fork() == 0:\n"
      "            time.sleep(2)\n            os._exit(0)\nexcept OSError:\n    print('coped')\n";
  r = run(copes);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "coped\n");
}

}  // namespace cordon::testing
