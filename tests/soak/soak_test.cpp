// The soak at CI size (tests/soak/soak.h): a few hundred runs of every kind per isolating
// backend through one long-lived backend with its pool; fails on any wrong outcome and on
// any column that grew. The full size is `cordon-soak` (docs/SOAK.md).
#include "soak.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>

#include "kernel_features.h"
#include "test_paths.h"

namespace cordon::soak {
namespace {

// CI size: 18 cycles of the 16-run mix (workload.h), a sample every 3 cycles.
Config ci_config(const std::string& backend) {
  Config c;
  c.backend = backend;
  c.sequential = 192;
  c.concurrent = 96;
  c.min_workers = 2;
  c.max_workers = 4;
  c.sample_every = 48;
  c.sessions = 24;
  c.session_calls = 120;
  c.plugin_dirs = {cordon::testing::plugin_dir()};
  c.progress = stderr;
  return c;
}

// `pending`: a kind whose outcome this configuration does not meet yet (said in the test);
// its runs still count for the leak columns.
void soak(const std::string& backend, const std::string& runtime = {},
          std::optional<Kind> pending = std::nullopt) {
  Config config = ci_config(backend);
  config.runtime = runtime;
  const Report report = run_soak(config);
  std::printf("%s\n", report.markdown(config).c_str());
  if (!report.skipped.empty()) CORDON_SKIP_OR_FAIL(report.skipped);
  ASSERT_EQ(report.error, "");
  for (std::size_t i = 0; i < kAllKinds.size(); ++i) {
    if (kAllKinds[i] != pending) {
      EXPECT_EQ(report.wrong[i], 0u) << to_string(kAllKinds[i]);
    }
  }
  if (!pending) {
    for (const std::string& w : report.wrong_examples) ADD_FAILURE() << w;
  }
  for (const Leak& l : report.leaks) {
    ADD_FAILURE() << "leak: " << l.column << " grew from " << l.first << " to " << l.last;
  }
  EXPECT_GE(report.samples.size(), 6u);
  // Every backend soaked here holds sessions (namespace, container under runc and runsc):
  // a refused session fails, never skips the phase.
  EXPECT_EQ(report.sessions_skipped, "");
  EXPECT_EQ(report.sessions, 24u);
  EXPECT_EQ(report.session_wrong, 0u);
}

TEST(Soak, NamespaceBackendStaysFlat) { soak("namespace"); }
TEST(Soak, ContainerBackendStaysFlat) { soak("container"); }
// The same under gVisor's runsc (its pool, its sandboxes' host processes, its sweep; its
// sessions, each a sandbox of its own): at ~0.5 s a run, CI's size takes minutes, so it
// runs in the full tier.
TEST(Soak, ContainerBackendUnderRunscStaysFlat) {
  if (!cordon_test::full_tier()) GTEST_SKIP() << "full tier only (CORDON_TEST_FULL=1)";
  // The soak's fork bomb asks for 32 processes, below the 128 the runsc declaration accepts
  // (gVisor's own threads count in the pids group); the attack suite's fork bombs run
  // under runsc at the least limit it accepts.
  soak("container", "runsc", Kind::kForkBomb);
}

}  // namespace
}  // namespace cordon::soak
