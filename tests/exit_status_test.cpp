// Outcome -> exit status and status line (the table in exit_status.h and README).
#include "frontend/exit_status.h"

#include <gtest/gtest.h>

#include <csignal>

namespace cordon::frontend {
namespace {

RunResult with_outcome(Outcome outcome) {
  RunResult result;
  result.outcome = outcome;
  result.backend = {"subprocess", "0.1.0"};
  return result;
}

TEST(ExitStatusTest, Table) {
  RunResult result = with_outcome(Outcome::kOk);
  result.exit_code = 0;
  EXPECT_EQ(exit_status(result), 0);

  result = with_outcome(Outcome::kFailed);
  result.exit_code = 7;
  EXPECT_EQ(exit_status(result), 7);

  result = with_outcome(Outcome::kSignaled);
  result.signal = SIGSEGV;
  EXPECT_EQ(exit_status(result), 139);

  EXPECT_EQ(exit_status(with_outcome(Outcome::kTimedOut)), 124);
  EXPECT_EQ(exit_status(with_outcome(Outcome::kSandboxError)), 125);

  result = with_outcome(Outcome::kLimitExceeded);
  result.limit = LimitKind::kMemory;
  EXPECT_EQ(exit_status(result), 137);
  result.limit = LimitKind::kProcesses;
  EXPECT_EQ(exit_status(result), 137);

  EXPECT_EQ(exit_status(with_outcome(Outcome::kCancelled), SIGINT), 130);
  EXPECT_EQ(exit_status(with_outcome(Outcome::kCancelled), SIGTERM), 143);
  EXPECT_EQ(exit_status(with_outcome(Outcome::kCancelled)), 130);
}

TEST(ExitStatusTest, FailedNeverLooksLikeSuccess) {
  RunResult result = with_outcome(Outcome::kFailed);
  result.exit_code = 256;  // not a real exit status; must not wrap to 0
  EXPECT_NE(exit_status(result), 0);
  result.exit_code = -1;
  EXPECT_NE(exit_status(result), 0);
}

TEST(ExitStatusTest, StatusLines) {
  RunResult result = with_outcome(Outcome::kOk);
  result.exit_code = 0;
  result.wall_ms = 12;
  EXPECT_EQ(status_line(result), "ok (exit 0) in 12 ms [subprocess 0.1.0]");

  result = with_outcome(Outcome::kSignaled);
  result.signal = SIGSEGV;
  EXPECT_EQ(status_line(result).rfind("killed by signal 11 (SIGSEGV) after", 0), 0u)
      << status_line(result);

  result = with_outcome(Outcome::kTimedOut);
  result.wall_ms = 200;
  result.stdout_truncated = true;
  EXPECT_EQ(status_line(result), "timed out after 200 ms; stdout truncated [subprocess 0.1.0]");

  result = with_outcome(Outcome::kSandboxError);
  result.error = "mkdir failed";
  EXPECT_EQ(status_line(result).rfind("sandbox error: mkdir failed", 0), 0u);

  result = with_outcome(Outcome::kLimitExceeded);
  result.limit = LimitKind::kMemory;
  result.oom_killed = true;
  EXPECT_NE(status_line(result).find("memory limit exceeded"), std::string::npos);
}

TEST(ExitStatusTest, SignalNames) {
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(9999), "signal 9999");
}

}  // namespace
}  // namespace cordon::frontend
