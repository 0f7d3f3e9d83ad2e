// The soak at CI size (tests/soak/soak.h): a few hundred runs of every kind per isolating
// backend through one long-lived backend with its pool; fails on any wrong outcome and on
// any column that grew. The full size is `cordon-soak` (docs/SOAK.md).
#include "soak.h"

#include <gtest/gtest.h>

#include <cstdio>

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
  c.plugin_dirs = {cordon::testing::plugin_dir()};
  c.progress = stderr;
  return c;
}

void soak(const std::string& backend) {
  const Config config = ci_config(backend);
  const Report report = run_soak(config);
  std::printf("%s\n", report.markdown(config).c_str());
  if (!report.skipped.empty()) CORDON_SKIP_OR_FAIL(report.skipped);
  ASSERT_EQ(report.error, "");
  EXPECT_EQ(report.total_wrong(), 0u);
  for (const std::string& w : report.wrong_examples) ADD_FAILURE() << w;
  for (const Leak& l : report.leaks) {
    ADD_FAILURE() << "leak: " << l.column << " grew from " << l.first << " to " << l.last;
  }
  EXPECT_GE(report.samples.size(), 6u);
}

TEST(Soak, NamespaceBackendStaysFlat) { soak("namespace"); }
TEST(Soak, ContainerBackendStaysFlat) { soak("container"); }

}  // namespace
}  // namespace cordon::soak
