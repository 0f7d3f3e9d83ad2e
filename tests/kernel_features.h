// Tests that need a kernel feature (namespaces, cgroups, a privileged positive control)
// skip with the reason when the host refuses it, unless CORDON_REQUIRE_KERNEL_FEATURES=1
// (CI, as root on a machine kind known to have them): then the skip is a failure, so a
// wrong probe cannot turn the suite green by skipping.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string_view>

namespace cordon_test {

// Wall-clock bounds of correctness checks ("a 200 ms timeout returns in under 2 s") are
// written for a real machine. CORDON_TEST_TIME_FACTOR (a whole number, default 1) widens
// them on a host known to be slower: the guest run of tests/guest under qemu's software
// emulation sets it. Only bounds go through here, never a timeout or sleep the code under
// test is given.
inline int time_factor() {
  const char* v = std::getenv("CORDON_TEST_TIME_FACTOR");
  const int f = v != nullptr ? std::atoi(v) : 1;
  return f >= 1 ? f : 1;
}
template <typename Rep, typename Period>
std::chrono::duration<Rep, Period> slack(std::chrono::duration<Rep, Period> bound) {
  return bound * time_factor();
}

// The full tier (scripts/test.sh --full) sets CORDON_TEST_FULL=1: tests too slow for CI's
// budget in every configuration run then (e.g. the attack suite under runsc beyond its lean
// set).
inline bool full_tier() {
  const char* v = std::getenv("CORDON_TEST_FULL");
  return v != nullptr && std::string_view(v) == "1";
}

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
