#include "cordon/result.h"

#include <gtest/gtest.h>

#include <csignal>
#include <optional>
#include <string>

#include "cordon/observer.h"

namespace cordon {
namespace {

struct TerminationCase {
  const char* name;
  Termination t;
  Outcome outcome;
  std::optional<LimitKind> limit;
  int exit_code;
  int signal;
};

void PrintTo(const TerminationCase& c, std::ostream* os) { *os << c.name; }

class ApplyTermination : public testing::TestWithParam<TerminationCase> {};

TEST_P(ApplyTermination, DecidesInOrder) {
  const auto& c = GetParam();
  RunResult result;
  result.limit = LimitKind::kDisk;  // stale values must be overwritten
  result.timed_out = true;
  apply_termination(c.t, result);
  EXPECT_EQ(result.outcome, c.outcome) << to_string(result.outcome);
  EXPECT_EQ(result.limit, c.limit);
  EXPECT_EQ(result.exit_code, c.exit_code);
  EXPECT_EQ(result.signal, c.signal);
  EXPECT_EQ(result.timed_out, c.outcome == Outcome::kTimedOut);
  EXPECT_EQ(result.oom_killed, c.t.oom_killed);
  EXPECT_EQ(result.ok(), c.outcome == Outcome::kOk);
}

// A table, kept one case per line: clang-format would spread each over six.
// clang-format off
constexpr auto kNoLimit = std::nullopt;
INSTANTIATE_TEST_SUITE_P(
    Table, ApplyTermination,
    testing::Values(
        //              name                            {deadline, cancel, oom, limit, exited, code, sig[, ceiling hit]}  outcome  limit  code  signal
        TerminationCase{"exit0",                        {false, false, false, {}, true, 0, 0},                 Outcome::kOk,            kNoLimit,           0,  0},
        TerminationCase{"exit7",                        {false, false, false, {}, true, 7, 0},                 Outcome::kFailed,        kNoLimit,           7,  0},
        TerminationCase{"segv",                         {false, false, false, {}, false, -1, SIGSEGV},         Outcome::kSignaled,      kNoLimit,          -1,  SIGSEGV},
        // The deadline wins over everything, including how the kill looked.
        TerminationCase{"deadline_killed",              {true, false, false, {}, false, -1, SIGKILL},          Outcome::kTimedOut,      kNoLimit,          -1,  SIGKILL},
        TerminationCase{"deadline_over_cancel_and_oom", {true, true, true, LimitKind::kCpu, false, -1, 9},     Outcome::kTimedOut,      kNoLimit,          -1,  9},
        // Exited right at the deadline: still timed out; the exit status is kept as a fact.
        TerminationCase{"deadline_exited",              {true, false, false, {}, true, 0, 0},                  Outcome::kTimedOut,      kNoLimit,           0,  0},
        TerminationCase{"cancelled",                    {false, true, false, {}, false, -1, SIGKILL},          Outcome::kCancelled,     kNoLimit,          -1,  SIGKILL},
        TerminationCase{"cancel_over_oom",              {false, true, true, LimitKind::kOutput, false, -1, 9}, Outcome::kCancelled,     kNoLimit,          -1,  9},
        TerminationCase{"oom",                          {false, false, true, {}, false, -1, SIGKILL},          Outcome::kLimitExceeded, LimitKind::kMemory, -1,  SIGKILL},
        TerminationCase{"oom_over_other_limit",         {false, false, true, LimitKind::kCpu, false, -1, 9},   Outcome::kLimitExceeded, LimitKind::kMemory, -1,  9},
        TerminationCase{"cpu_limit",                    {false, false, false, LimitKind::kCpu, false, -1, SIGXCPU}, Outcome::kLimitExceeded, LimitKind::kCpu, -1, SIGXCPU},
        TerminationCase{"output_limit_exited",          {false, false, false, LimitKind::kOutput, true, 0, 0}, Outcome::kLimitExceeded, LimitKind::kOutput,  0,  0},
        TerminationCase{"processes",                    {false, false, false, LimitKind::kProcesses, true, 1, 0}, Outcome::kLimitExceeded, LimitKind::kProcesses, 1, 0},
        // The one process-limit rule: a refused fork explains a failure, never a success.
        TerminationCase{"ceiling_hit_failed",           {false, false, false, {}, true, 2, 0, true},           Outcome::kLimitExceeded, LimitKind::kProcesses, 2, 0},
        TerminationCase{"ceiling_hit_signaled",         {false, false, false, {}, false, -1, SIGSEGV, true},   Outcome::kLimitExceeded, LimitKind::kProcesses, -1, SIGSEGV},
        TerminationCase{"ceiling_hit_exit0",            {false, false, false, {}, true, 0, 0, true},           Outcome::kOk,            kNoLimit,           0,  0},
        TerminationCase{"ceiling_hit_deadline",         {true, false, false, {}, false, -1, SIGKILL, true},    Outcome::kTimedOut,      kNoLimit,          -1,  SIGKILL},
        TerminationCase{"ceiling_hit_oom",              {false, false, true, {}, false, -1, SIGKILL, true},    Outcome::kLimitExceeded, LimitKind::kMemory, -1,  SIGKILL}),
    [](const testing::TestParamInfo<TerminationCase>& param_info) {
      return param_info.param.name;
    });
// clang-format on

TEST(SandboxError, CarriesReasonAndBackend) {
  const RunResult result = sandbox_error(BackendId{"ns", "1.0"}, "mount failed");
  EXPECT_EQ(result.outcome, Outcome::kSandboxError);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.error, "mount failed");
  EXPECT_EQ(result.backend.name, "ns");
  EXPECT_EQ(result.exit_code, -1);
  EXPECT_FALSE(result.timed_out);
}

// The network allow-list's limit, by the process limit's rule: failing after it was reached
// is exceeding it; exiting 0 is coping; the deadline, a cancel or another limit stay.
TEST(ApplyNetworkLimit, OnlyAFailureAfterTheLimitIsLimitExceeded) {
  const auto after = [](Outcome outcome, std::optional<std::string> reached) {
    RunResult r;
    r.outcome = outcome;
    if (outcome == Outcome::kLimitExceeded) r.limit = LimitKind::kMemory;
    r.network = NetworkReport{};
    r.network->limit_reached = std::move(reached);
    apply_network_limit(r);
    return std::pair{r.outcome, r.limit};
  };
  using P = std::pair<Outcome, std::optional<LimitKind>>;
  EXPECT_EQ(after(Outcome::kFailed, "bytes"), P(Outcome::kLimitExceeded, LimitKind::kNetwork));
  EXPECT_EQ(after(Outcome::kSignaled, "connections"),
            P(Outcome::kLimitExceeded, LimitKind::kNetwork));
  EXPECT_EQ(after(Outcome::kOk, "bytes"), P(Outcome::kOk, std::nullopt));
  EXPECT_EQ(after(Outcome::kTimedOut, "bytes"), P(Outcome::kTimedOut, std::nullopt));
  EXPECT_EQ(after(Outcome::kCancelled, "bytes"), P(Outcome::kCancelled, std::nullopt));
  EXPECT_EQ(after(Outcome::kLimitExceeded, "bytes"),
            P(Outcome::kLimitExceeded, LimitKind::kMemory));
  EXPECT_EQ(after(Outcome::kFailed, std::nullopt), P(Outcome::kFailed, std::nullopt));
  RunResult no_list;
  no_list.outcome = Outcome::kFailed;
  apply_network_limit(no_list);
  EXPECT_EQ(no_list.outcome, Outcome::kFailed);
}

TEST(ToString, OutcomeNamesArePublicSchema) {
  EXPECT_EQ(to_string(Outcome::kOk), "ok");
  EXPECT_EQ(to_string(Outcome::kFailed), "failed");
  EXPECT_EQ(to_string(Outcome::kSignaled), "signaled");
  EXPECT_EQ(to_string(Outcome::kTimedOut), "timed_out");
  EXPECT_EQ(to_string(Outcome::kLimitExceeded), "limit_exceeded");
  EXPECT_EQ(to_string(Outcome::kCancelled), "cancelled");
  EXPECT_EQ(to_string(Outcome::kSandboxError), "sandbox_error");
  EXPECT_EQ(to_string(LimitKind::kMemory), "memory");
  EXPECT_EQ(to_string(LimitKind::kProcesses), "processes");
  EXPECT_EQ(to_string(LimitKind::kOutput), "output");
  EXPECT_EQ(to_string(LimitKind::kDisk), "disk");
  EXPECT_EQ(to_string(LimitKind::kCpu), "cpu");
  EXPECT_EQ(to_string(LimitKind::kNetwork), "network");
  // Every name is listed once, for the readers that look them up.
  EXPECT_EQ(std::size(kAllLimitKinds), 6U);
  EXPECT_EQ(std::size(kAllOutcomes), 7U);
  EXPECT_EQ(to_string(RunState::kPreparing), "preparing");
  EXPECT_EQ(to_string(RunState::kRunning), "running");
  EXPECT_EQ(to_string(RunState::kStopping), "stopping");
  EXPECT_EQ(to_string(RunState::kFinished), "finished");
}

}  // namespace
}  // namespace cordon
