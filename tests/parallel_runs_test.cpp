// Runs of every backend in parallel threads of one process, as an embedder (the
// inspector's Compare tab, a service) makes them: the backends share the process's
// resource-group names (cordon-<pid>-<n>) and must never take or remove each other's.
// Issue #11 item 15: subprocess runs came back "clone: No such file or directory" (their
// cgroup removed under them) while namespace and container runs went on beside them.
//
// The backends come from their plugins, as the CLI and the inspector load them. A backend
// whose probe refuses here is left out with the reason (CORDON_REQUIRE_KERNEL_FEATURES=1
// turns that into a failure).
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cordon/plugin_registry.h"
#include "kernel_features.h"
#include "test_paths.h"

namespace cordon {
namespace {

struct Lane {
  std::string backend;
  int threads = 0;
  int runs_per_thread = 0;
};

TEST(ParallelRuns, EveryBackendInParallelThreadsOfOneProcessNeverFails) {
  PluginRegistry registry;
  registry.discover({testing::plugin_dir()});
  // >= 200 runs in all; the subprocess runs are the cheap ones and the ones that failed.
  const std::vector<Lane> lanes = {
      {"subprocess", 3, 40}, {"namespace", 2, 30}, {"container", 2, 12}};
  std::vector<BackendPtr> backends;
  std::vector<std::string> missing;
  for (const Lane& lane : lanes) {
    auto b = registry.create(lane.backend);
    if (!b) {
      missing.push_back(lane.backend + ": " + b.error().describe());
    } else if (!(*b)->probe().available) {
      missing.push_back(lane.backend + ": " + (*b)->probe().reason);
    }
    backends.push_back(b ? std::move(*b) : BackendPtr{});
  }
  if (!missing.empty() && cordon_test::require_kernel_features()) {
    for (const auto& m : missing) ADD_FAILURE() << "backend unavailable: " << m;
  }

  std::mutex mu;
  std::vector<std::string> failures;
  std::atomic<int> total{0};
  std::vector<std::thread> threads;
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    Backend* backend = backends[l].get();
    if (backend == nullptr || !backend->probe().available) continue;
    for (int t = 0; t < lanes[l].threads; ++t) {
      threads.emplace_back([&, backend, l, t] {
        for (int i = 0; i < lanes[l].runs_per_thread; ++i) {
          RunRequest req;
          const std::string word = "run-" + std::to_string(t) + "-" + std::to_string(i);
          req.code = "echo " + word;
          req.timeout = std::chrono::seconds(30);
          const RunResult r = backend->run(req, {}, nullptr);
          ++total;
          if (r.outcome != Outcome::kOk || r.stdout_data != word + "\n") {
            const std::lock_guard lock(mu);
            failures.push_back(lanes[l].backend + " " + word + ": " +
                               std::string(to_string(r.outcome)) + " " + r.error.value_or("") +
                               " stdout=" + r.stdout_data + " stderr=" + r.stderr_data);
          }
        }
      });
    }
  }
  // Meanwhile, backends come and go as in an embedder that builds them on demand: each
  // creation sweeps leftovers, which must never reach the groups of runs in flight.
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    while (!stop) {
      for (const char* name : {"subprocess", "namespace", "container"}) {
        (void)registry.create(name);
      }
    }
  });
  for (auto& t : threads) t.join();
  stop = true;
  churn.join();
  backends.clear();  // before the registry unloads their plugins

  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << total.load() << " runs failed";
  if (missing.empty()) {
    EXPECT_GE(total.load(), 200);
  }
  for (const auto& m : missing) std::cout << "left out: " << m << "\n";
}

}  // namespace
}  // namespace cordon
