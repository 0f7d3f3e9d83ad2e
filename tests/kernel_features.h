// Tests that need a kernel feature (namespaces, cgroups, a privileged positive control)
// skip with the reason when the host refuses it, unless CORDON_REQUIRE_KERNEL_FEATURES=1
// (CI, as root on a machine kind known to have them): then the skip is a failure, so a
// wrong probe cannot turn the suite green by skipping.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace cordon_test {

inline bool require_kernel_features() {
  const char* v = std::getenv("CORDON_REQUIRE_KERNEL_FEATURES");
  return v != nullptr && std::string_view(v) == "1";
}

}  // namespace cordon_test

#define CORDON_SKIP_OR_FAIL(reason)                                                         \
  do {                                                                                      \
    if (::cordon_test::require_kernel_features()) {                                         \
      FAIL() << "required by CORDON_REQUIRE_KERNEL_FEATURES but unavailable: " << (reason); \
    }                                                                                       \
    GTEST_SKIP() << (reason);                                                               \
  } while (0)
