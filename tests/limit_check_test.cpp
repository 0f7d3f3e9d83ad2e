// The one check of a request's limits against what a backend declares (limit_check.h).
#include "cordon/limit_check.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>

namespace cordon {
namespace {

Capabilities declared() {
  Capabilities caps;
  caps.aspects = {
      capability(Aspect::kMemory, Enforcement::kEnforced, "cgroup", "1 GiB", "",
                 LimitRange{16u << 20, 1u << 30}),
      capability(Aspect::kProcesses, Enforcement::kNone, "", std::nullopt, "not limited"),
      capability(Aspect::kCpu, Enforcement::kPartial, "RLIMIT_CPU", "1 s", "", kRlimitCpuRange),
      capability(Aspect::kOutput, Enforcement::kEnforced, "cap", "1 MiB", "", kOutputRange),
  };
  return caps;
}

TEST(LimitCheck, NothingAskedIsFine) {
  EXPECT_FALSE(refuse_limits(Limits{}, declared(), "test"));
  EXPECT_TRUE(check_limits(Limits{}, declared(), "test"));
}

TEST(LimitCheck, BothEndsOfARangeAreAccepted) {
  Limits limits;
  limits.memory_bytes = 16u << 20;
  EXPECT_FALSE(refuse_limits(limits, declared(), "test"));
  limits.memory_bytes = 1u << 30;
  EXPECT_FALSE(refuse_limits(limits, declared(), "test"));
}

TEST(LimitCheck, OutsideTheRangeIsRefusedNamingTheRange) {
  Limits limits;
  limits.memory_bytes = 1;
  auto refusal = refuse_limits(limits, declared(), "test");
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->aspect, Aspect::kMemory);
  EXPECT_EQ(refusal->reason,
            "1 B is below what the test backend can honour: it accepts 16 MiB to 1 GiB");
  limits.memory_bytes = (1u << 30) + 1;
  refusal = refuse_limits(limits, declared(), "test");
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->reason.find("is above what"), std::string::npos) << refusal->reason;
  const Status status = check_limits(limits, declared(), "test");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(status.error().message.rfind("memory limit: ", 0), 0u) << status.error().message;
}

TEST(LimitCheck, ALimitTheBackendDoesNotEnforceIsRefusedNotDropped) {
  Limits limits;
  limits.max_processes = 5;
  const auto refusal = refuse_limits(limits, declared(), "test");
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->aspect, Aspect::kProcesses);
  EXPECT_NE(refusal->reason.find("cannot enforce a process limit (not limited)"), std::string::npos)
      << refusal->reason;
  limits = Limits{};
  limits.scratch_bytes = 1u << 20;  // no entry at all
  ASSERT_TRUE(refuse_limits(limits, declared(), "test"));
}

TEST(LimitCheck, OutputCapZeroIsTheDefaultAndAboveTheMaximumIsRefused) {
  Limits limits;
  limits.output_bytes = 0;
  EXPECT_FALSE(refuse_limits(limits, declared(), "test"));
  limits.output_bytes = kMaxOutputBytes + 1;
  const auto refusal = refuse_limits(limits, declared(), "test");
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->aspect, Aspect::kOutput);
}

TEST(LimitCheck, ZeroOrNegativeCpuTimeIsBelowTheRange) {
  Limits limits;
  limits.cpu_time = std::chrono::milliseconds(-5);
  const auto refusal = refuse_limits(limits, declared(), "test");
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->aspect, Aspect::kCpu);
  EXPECT_NE(refusal->reason.find("1 ms to 292 years"), std::string::npos) << refusal->reason;
}

TEST(LimitCheck, HardRlimitIsThisProcesssHardLimit) {
  struct rlimit r{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &r), 0);
  EXPECT_EQ(hard_rlimit(RLIMIT_NOFILE), r.rlim_max);
  EXPECT_EQ(hard_rlimit(/*resource=*/-1), std::nullopt);  // EINVAL
}

}  // namespace
}  // namespace cordon
