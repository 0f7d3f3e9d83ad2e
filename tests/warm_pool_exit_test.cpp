// Issue #40, item 13: a library user who keeps a backend in a static object and leaves main
// while its warm pools build must see the process exit cleanly, not crash in the static
// destructors (the pools' threads used to run on into state already destroyed).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <string>

#include "cordon/proc/spawn.h"
#include "kernel_features.h"

namespace cordon {
namespace {

TEST(WarmPoolExit, AStaticBackendLeftWhilePoolsBuildExitsCleanly) {
  // Each wait in main lands at another point of the pools' first builds.
  for (int i = 0; i < 40; ++i) {
    proc::SpawnOptions o;
    o.path = CORDON_TEST_STATIC_POOL_EXIT;
    o.argv = {o.path, std::to_string((i % 10) * 1500)};
    auto child = proc::spawn(o);
    ASSERT_TRUE(child.has_value()) << child.error().describe();
    auto end = child->wait();
    ASSERT_TRUE(end.has_value()) << end.error().describe();
    ASSERT_EQ(end->signal(), 0) << "run " << i << " died of signal " << end->signal();
    if (end->exit_code() == 77) CORDON_SKIP_OR_FAIL("the namespace backend is not available");
    ASSERT_EQ(end->exit_code(), 0) << "run " << i;
  }
}

}  // namespace
}  // namespace cordon
