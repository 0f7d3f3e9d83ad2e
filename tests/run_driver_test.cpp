// drive_run() over a StartedTree made of one real /bin/sh child (no containment needed:
// the scripts are harmless and end by themselves or by the test's kill): the order of the
// steps, what each hook's failure does, and the outcome rules the driver owns.
#include "cordon/run_driver.h"

#include <gtest/gtest.h>

#include <csignal>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cordon/claims.h"
#include "cordon/proc/pipe.h"
#include "cordon/proc/spawn.h"
#include "cordon/temp_dir.h"

namespace cordon {
namespace {

using namespace std::chrono_literals;

// Records every call the driver makes; each hook can be told to fail.
class ShellTree final : public StartedTree {
 public:
  ShellTree(proc::ChildProcess child, std::filesystem::path dir)
      : child_(std::move(child)), dir_(std::move(dir)) {}

  [[nodiscard]] int exit_fd() const override {
    return report_read_ ? silent_.read.get() : child_.pidfd();
  }
  void kill() override {
    calls.emplace_back("kill");
    // Like a pooled namespace sandbox whose init reported: the report is read, the init is
    // left alive for the pool, and its exit fd is not readable again.
    if (report_left_alive) {
      auto silent = proc::make_pipe();
      if (silent) silent_ = std::move(*silent);
      report_read_ = true;
    }
    (void)child_.signal(SIGKILL);
  }
  [[nodiscard]] Status finish(RunClock::time_point /*until*/) override {
    calls.emplace_back("finish");
    if (fail_finish) return fail(ErrorCode::kTimeout, "tree survived");
    auto info = child_.wait();
    if (!info) return std::unexpected(info.error());
    exit_ = *info;
    return {};
  }
  [[nodiscard]] Status describe_end(Termination& t, RunResult& result) override {
    calls.emplace_back("describe_end");
    if (!sees_end) return {};  // like a sandbox whose init was killed with the code
    t.exited = exit_.exited();
    t.exit_code = exit_.exit_code();
    t.signal = exit_.signal();
    result.cpu_ms = 7;
    if (fail_describe) return fail(ErrorCode::kInternal, "end unknown");
    return {};
  }
  [[nodiscard]] Result<std::filesystem::path> artifact_dir() override {
    calls.emplace_back("artifact_dir");
    if (fail_artifacts) return fail(ErrorCode::kInternal, "no dir");
    return dir_;
  }
  [[nodiscard]] Status teardown(RunClock::time_point /*until*/) override {
    calls.emplace_back("teardown");
    if (fail_teardown) return fail(ErrorCode::kSystem, "remove things");
    return {};
  }
  // Off by default: the StartedTree default (no measure) is what most trees give.
  [[nodiscard]] std::optional<ResourceSample> sample() const override {
    if (!measures) return StartedTree::sample();
    ++samples_taken;
    return ResourceSample{.elapsed = {}, .memory_bytes = samples_taken * 1000u, .cpu_usec = {}};
  }

  std::vector<std::string> calls;
  bool fail_finish = false;
  bool fail_describe = false;
  bool fail_artifacts = false;
  bool fail_teardown = false;
  bool measures = false;
  bool sees_end = true;
  bool report_left_alive = false;
  mutable std::uint64_t samples_taken = 0;

 private:
  proc::ChildProcess child_;
  std::filesystem::path dir_;
  proc::ExitInfo exit_;
  bool report_read_ = false;
  proc::Pipe silent_;  // never written: its read end never becomes readable
};

class StateLog final : public RunObserver {
 public:
  void on_state(RunState state) override { states.emplace_back(to_string(state)); }
  void on_sample(const ResourceSample& sample) override { samples.push_back(sample); }
  std::vector<std::string> states;
  std::vector<ResourceSample> samples;
};

class RunDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("run-driver-test-");
    ASSERT_TRUE(dir) << dir.error().describe();
    dir_ = std::move(*dir);
    request_.code = "unused";
    request_.timeout = 10s;
  }

  // Starts `script` with the request's pipes in the temp dir and drives it to the end.
  RunResult drive(const std::string& script, ShellTree** tree_out, const CancelToken& cancel = {}) {
    auto pipes = make_run_pipes(request_);
    EXPECT_TRUE(pipes);
    proc::SpawnOptions opts;
    opts.path = "/bin/sh";
    opts.argv = {"sh", "-c", script};
    opts.env = {"PATH=/usr/bin:/bin"};
    opts.cwd = dir_.path().string();
    opts.stdin_fd = pipes->child_stdin();
    opts.stdout_fd = pipes->child_stdout();
    opts.stderr_fd = pipes->child_stderr();
    auto child = proc::spawn(opts);
    EXPECT_TRUE(child) << child.error().describe();
    tree_ = std::make_unique<ShellTree>(std::move(*child), dir_.path());
    *tree_out = tree_.get();
    configure(*tree_);
    RunStateReporter state(&log_);
    RunFrame frame{{"test", "1"}, RunClock::now(), "deadline + test kill", {}, std::nullopt};
    frame.enforced.push_back({Aspect::kNetwork, "none here", std::nullopt});
    return drive_run(request_, cancel, state, *tree_, std::move(*pipes), std::move(frame));
  }

  std::function<void(ShellTree&)> configure = [](ShellTree&) {};
  RunRequest request_;
  StateLog log_;
  TempDir dir_;
  std::unique_ptr<ShellTree> tree_;
};

TEST_F(RunDriverTest, ExitOutputAndStepOrder) {
  ShellTree* tree = nullptr;
  const RunResult r = drive("echo out; echo err >&2; exit 3", &tree);
  EXPECT_EQ(r.outcome, Outcome::kFailed) << r.error.value_or("");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.stdout_data, "out\n");
  EXPECT_EQ(r.stderr_data, "err\n");
  EXPECT_EQ(r.cpu_ms, 7);  // describe_end's measures reach the result
  EXPECT_EQ(r.backend.name, "test");
  // The kill comes even after a normal exit; no artifact_dir() without globs.
  EXPECT_EQ(tree->calls, (std::vector<std::string>{"kill", "finish", "describe_end", "teardown"}));
  EXPECT_EQ(log_.states, (std::vector<std::string>{"running", "stopping", "finished"}));
  ASSERT_EQ(r.enforced.size(), 3U);
  EXPECT_EQ(r.enforced[0].aspect, Aspect::kTimeout);
  EXPECT_EQ(r.enforced[0].mechanism, "deadline + test kill");
  EXPECT_EQ(r.enforced[1].aspect, Aspect::kOutput);
  EXPECT_EQ(r.enforced[2].aspect, Aspect::kNetwork);
}

TEST_F(RunDriverTest, StdinIsFedAndClosed) {
  request_.stdin_data = "hello\n";
  ShellTree* tree = nullptr;
  const RunResult r = drive("cat", &tree);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("");
  EXPECT_EQ(r.stdout_data, "hello\n");
}

TEST_F(RunDriverTest, DeadlineKillsAndDecides) {
  request_.timeout = 300ms;
  ShellTree* tree = nullptr;
  const RunResult r = drive("exec sleep 30", &tree);
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);  // the driver's kill, kept as a fact
  EXPECT_LT(r.wall_ms, 20000);   // wide: it did not wait for the sleep
  EXPECT_EQ(tree->calls.front(), "kill");
}

// Issue #40 (found after its items were merged): once the driver pumped on after every
// kill, a pooled namespace run waited out the whole teardown bound after its code exited,
// since the sandbox's exit fd is not readable again once its report was read. A tree that
// exited is not pumped again, and one that does not need it is never pumped after the kill.
TEST_F(RunDriverTest, AnEndedTreeIsNotPumpedAgainAfterTheKill) {
  request_.setup_bound = 60s;
  configure = [](ShellTree& t) { t.report_left_alive = true; };
  ShellTree* tree = nullptr;
  auto started = RunClock::now();
  RunResult r = drive("echo done", &tree);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("");
  EXPECT_EQ(r.stdout_data, "done\n");
  EXPECT_LT(RunClock::now() - started, 30s);  // wide: not the 60 s teardown bound

  request_.timeout = 300ms;
  started = RunClock::now();
  r = drive("exec sleep 30", &tree);
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("");
  EXPECT_LT(RunClock::now() - started, 30s);
}

TEST_F(RunDriverTest, CancelKillsAndDecides) {
  CancelSource source;
  source.cancel();
  ShellTree* tree = nullptr;
  const RunResult r = drive("exec sleep 30", &tree, source.token());
  EXPECT_EQ(r.outcome, Outcome::kCancelled);
  EXPECT_EQ(r.signal, SIGKILL);
}

// A backend whose reaper of the main process died with it (a sandbox's init) reports no
// end and no figures: the run still ends by the SIGKILL the driver had sent, and the
// figures stay unmeasured instead of 0.
TEST_F(RunDriverTest, StoppedRunWithoutASeenEndWasSigkilledAndIsUnmeasured) {
  configure = [](ShellTree& t) { t.sees_end = false; };
  request_.timeout = 300ms;
  ShellTree* tree = nullptr;
  RunResult r = drive("exec sleep 30", &tree);
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("");
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_FALSE(r.cpu_ms.has_value());
  EXPECT_FALSE(r.max_rss_kb.has_value());
  EXPECT_FALSE(r.memory_peak_kb.has_value());

  CancelSource source;
  source.cancel();
  r = drive("exec sleep 30", &tree, source.token());
  EXPECT_EQ(r.outcome, Outcome::kCancelled);
  EXPECT_EQ(r.signal, SIGKILL);
}

TEST_F(RunDriverTest, CpuSignalWithCpuLimitIsTheLimit) {
  request_.limits.cpu_time = 1s;
  ShellTree* tree = nullptr;
  RunResult r = drive("kill -s XCPU $$", &tree);
  EXPECT_EQ(r.outcome, Outcome::kLimitExceeded);
  EXPECT_EQ(r.limit, LimitKind::kCpu);
}

TEST_F(RunDriverTest, CpuSignalWithoutCpuLimitIsASignal) {
  ShellTree* tree = nullptr;
  const RunResult r = drive("kill -s XCPU $$", &tree);
  EXPECT_EQ(r.outcome, Outcome::kSignaled);
  EXPECT_EQ(r.signal, SIGXCPU);
}

TEST_F(RunDriverTest, FinishFailureCutsTheRunShort) {
  configure = [](ShellTree& t) { t.fail_finish = true; };
  request_.artifact_globs = {"*"};
  ShellTree* tree = nullptr;
  const RunResult r = drive("echo partial", &tree);
  EXPECT_EQ(r.outcome, Outcome::kSandboxError);
  EXPECT_EQ(r.error, "teardown: tree survived");
  EXPECT_EQ(r.stdout_data, "partial\n");  // what was read is kept
  EXPECT_EQ(tree->calls, (std::vector<std::string>{"kill", "finish"}));
}

TEST_F(RunDriverTest, ArtifactsComeFromTheTreesDir) {
  request_.artifact_globs = {"*.txt"};
  ShellTree* tree = nullptr;
  const RunResult r = drive("printf data > a.txt", &tree);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("");
  ASSERT_EQ(r.artifacts.size(), 1U);
  EXPECT_EQ(r.artifacts[0].path, "a.txt");
  EXPECT_EQ(r.artifacts[0].content, "data");
  EXPECT_EQ(tree->calls, (std::vector<std::string>{"kill", "finish", "describe_end", "artifact_dir",
                                                   "teardown"}));
}

// A failing describe_end() or teardown() makes a sandbox error with the hook's own
// reason, and the host is still cleaned up (teardown() is the last call either way).
TEST_F(RunDriverTest, LateHookFailuresAreSandboxErrorsWithTheirReason) {
  const struct {
    bool ShellTree::* flag;
    const char* error;
  } cases[] = {{&ShellTree::fail_describe, "end unknown"},
               {&ShellTree::fail_teardown, "remove things"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.error);
    configure = [&](ShellTree& t) { t.*c.flag = true; };
    ShellTree* tree = nullptr;
    const RunResult r = drive("exit 0", &tree);
    EXPECT_EQ(r.outcome, Outcome::kSandboxError);
    EXPECT_EQ(r.error, c.error);
    EXPECT_EQ(tree->calls.back(), "teardown");
  }
}

TEST_F(RunDriverTest, FirstSandboxFailureWins) {
  configure = [](ShellTree& t) {
    t.fail_artifacts = true;
    t.fail_teardown = true;
  };
  request_.artifact_globs = {"*"};
  ShellTree* tree = nullptr;
  const RunResult r = drive("exit 0", &tree);
  EXPECT_EQ(r.outcome, Outcome::kSandboxError);
  EXPECT_EQ(r.error, "collect artifacts: no dir");
  EXPECT_EQ(tree->calls.back(), "teardown");
}

TEST_F(RunDriverTest, SamplesReachTheObserverWhileTheCodeRuns) {
  configure = [](ShellTree& t) { t.measures = true; };
  ShellTree* tree = nullptr;
  const RunResult r = drive("sleep 1; echo done", &tree);
  EXPECT_EQ(r.outcome, Outcome::kOk);
  EXPECT_EQ(r.stdout_data, "done\n");
  // About one per kSampleInterval over the second; wide bounds (a loaded machine).
  ASSERT_GE(log_.samples.size(), 2u);
  EXPECT_LE(log_.samples.size(), static_cast<std::size_t>(1000ms / kSampleInterval) + 2);
  EXPECT_EQ(log_.samples.size(), tree->samples_taken);
  for (std::size_t i = 1; i < log_.samples.size(); ++i) {
    EXPECT_GE(log_.samples[i].elapsed, log_.samples[i - 1].elapsed);
    EXPECT_EQ(log_.samples[i].memory_bytes, (i + 1) * 1000u);
  }
  EXPECT_LE(log_.samples.back().elapsed, std::chrono::milliseconds(r.wall_ms) + kSampleInterval);
}

TEST_F(RunDriverTest, ATreeThatCannotMeasureSendsNoSamples) {
  ShellTree* tree = nullptr;
  const RunResult r = drive("sleep 0.5", &tree);
  EXPECT_EQ(r.outcome, Outcome::kOk);
  EXPECT_TRUE(log_.samples.empty());
}

TEST_F(RunDriverTest, SamplingKeepsTheDeadline) {
  configure = [](ShellTree& t) { t.measures = true; };
  request_.timeout = 400ms;
  ShellTree* tree = nullptr;
  const RunResult r = drive("sleep 30", &tree);
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  EXPECT_GE(r.wall_ms, 400);
  EXPECT_LT(r.wall_ms, 20000);
  EXPECT_FALSE(log_.samples.empty());
}

TEST(RunDriver, CancelledBeforeStart) {
  const RunResult r = cancelled_before_start({"test", "1"}, RunClock::now());
  EXPECT_EQ(r.outcome, Outcome::kCancelled);
  EXPECT_EQ(r.backend.name, "test");
  EXPECT_GE(r.setup_ms, 0);
  // Nothing ran: no signal, nothing measured.
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.cpu_ms.has_value());
  EXPECT_FALSE(r.max_rss_kb.has_value());
}

// ---- RunSetup: the first steps of every backend's run() ----

// The smallest backend RunSetup can check a request against: it enforces no limit but the
// output cap every backend enforces (so a request asking for another is refused,
// limit_check.h), and its probe is given.
class LimitlessBackend final : public Backend {
 public:
  [[nodiscard]] std::string_view name() const override { return "limitless"; }
  [[nodiscard]] std::string_view version() const override { return "9"; }
  [[nodiscard]] Probe probe() const override { return {true, ""}; }
  [[nodiscard]] Capabilities capabilities(const Limits& limits) const override {
    return {{output_claim(effective_output_cap(limits))}};
  }
  [[nodiscard]] RunResult run(const RunRequest& /*request*/, const CancelToken& /*cancel*/,
                              RunObserver* /*observer*/) override {
    return {};
  }
  // Counts its work; fails with `refusal` when set, once: later calls get the same answer.
  [[nodiscard]] Status prepare() override {
    return prepared_([this]() -> Status {
      ++prepared;
      std::this_thread::sleep_for(prepare_takes);
      if (refusal.empty()) return {};
      return fail(ErrorCode::kUnavailable, refusal);
    });
  }
  int prepared = 0;
  std::string refusal;
  std::chrono::milliseconds prepare_takes{0};

 private:
  PrepareOnce prepared_;
};

// A run the probe accepts prepares the backend, once; a failure to prepare refuses this
// run and every later one with its reason (fail closed), and the work is not retried.
TEST(RunSetup, TheBackendIsPreparedOnceAndAFailureRefusesEveryRun) {
  RunRequest request;
  request.code = "true";
  const Probe fine{true, "fine"};
  LimitlessBackend ready;
  for (int i = 0; i < 2; ++i) EXPECT_FALSE(RunSetup(ready, request, nullptr, &fine).refused);
  EXPECT_EQ(ready.prepared, 1);
  LimitlessBackend broken;
  broken.refusal = "the runtime directory is read-only";
  for (int i = 0; i < 2; ++i) {
    const RunSetup setup(broken, request, nullptr, &fine);
    ASSERT_TRUE(setup.refused.has_value());
    EXPECT_EQ(setup.refused->outcome, Outcome::kSandboxError);
    EXPECT_EQ(setup.refused->error, "the runtime directory is read-only");
  }
  EXPECT_EQ(broken.prepared, 1);
  // Refused before preparing: an invalid request or a probe that says no.
  LimitlessBackend untouched;
  const Probe unavailable{false, "no kernel here"};
  EXPECT_TRUE(RunSetup(untouched, request, nullptr, &unavailable).refused);
  EXPECT_EQ(untouched.prepared, 0);
}

TEST(RunSetup, AnAcceptedRequestStartsTheClockAndReportsPreparingThenFinished) {
  LimitlessBackend backend;
  RunRequest request;
  request.code = "true";
  request.setup_bound = std::chrono::milliseconds(1234);
  StateLog log;
  const auto before = RunClock::now();
  {
    const Probe probe{true, "fine"};
    RunSetup setup(backend, request, &log, &probe);
    EXPECT_FALSE(setup.refused.has_value());
    EXPECT_EQ(setup.id.name, "limitless");
    EXPECT_EQ(setup.id.version, "9");
    EXPECT_GE(setup.started, before);
    // The bound as asked, moved only by the (here instant) first preparation.
    EXPECT_GE(setup.until - setup.started, std::chrono::milliseconds(1234));
    EXPECT_LT(setup.until - setup.started, std::chrono::milliseconds(1234 + 1000));
    EXPECT_EQ(log.states, std::vector<std::string>{"preparing"});
    const RunFrame frame = setup.frame();
    EXPECT_EQ(frame.backend.name, "limitless");
    EXPECT_EQ(frame.setup_started, setup.started);
    const RunResult error = setup.error("no room");
    EXPECT_EQ(error.outcome, Outcome::kSandboxError);
    EXPECT_EQ(error.error, "no room");
    EXPECT_EQ(error.backend.name, "limitless");
    const RunResult cancelled = setup.cancelled();
    EXPECT_EQ(cancelled.outcome, Outcome::kCancelled);
    EXPECT_EQ(cancelled.backend.version, "9");
  }
  EXPECT_EQ(log.states, (std::vector<std::string>{"preparing", "finished"}));
}

// A first run that prepares the backend is not charged its one-time preparation against
// the set-up bound (the container backend writes a root directory then): the bound starts
// after it, while setup_ms (from `started`) still shows the wait. Later runs prepare nothing.
TEST(RunSetup, TheOneTimePreparationIsNotChargedToTheSetUpBound) {
  LimitlessBackend backend;
  backend.prepare_takes = std::chrono::milliseconds(300);
  RunRequest request;
  request.code = "true";
  request.setup_bound = std::chrono::milliseconds(100);
  const Probe probe{true, "fine"};
  {
    const RunSetup first(backend, request, nullptr, &probe);
    ASSERT_FALSE(first.refused.has_value());
    EXPECT_GE(first.until - first.started, std::chrono::milliseconds(400));
    EXPECT_GT(first.until, RunClock::now()) << "the bound ran out during the preparation";
  }
  const RunSetup second(backend, request, nullptr, &probe);
  EXPECT_EQ(backend.prepared, 1);
  EXPECT_LT(second.until - second.started, std::chrono::milliseconds(300))
      << "a prepared backend's runs get the bound as asked";
}

TEST(RunSetup, AnInvalidRequestIsRefusedBeforeTheProbeIsRead) {
  LimitlessBackend backend;
  RunRequest request;
  request.code = "true";
  request.limits.memory_bytes = 64u << 20;  // a limit this backend does not enforce
  const Probe unavailable{false, "no kernel here"};
  const RunSetup setup(backend, request, nullptr, &unavailable);
  ASSERT_TRUE(setup.refused.has_value());
  EXPECT_EQ(setup.refused->outcome, Outcome::kSandboxError);
  EXPECT_TRUE(setup.refused->error.value_or("").starts_with("invalid request: "))
      << setup.refused->error.value_or("");
  EXPECT_EQ(setup.refused->backend.name, "limitless");
}

TEST(RunSetup, AValidRequestOnAHostTheProbeRefusesGetsTheProbesReason) {
  LimitlessBackend backend;
  RunRequest request;
  request.code = "true";
  const Probe unavailable{false, "no kernel here"};
  const RunSetup refused(backend, request, nullptr, &unavailable);
  ASSERT_TRUE(refused.refused.has_value());
  EXPECT_EQ(refused.refused->outcome, Outcome::kSandboxError);
  EXPECT_EQ(refused.refused->error, "no kernel here");
  // Without a probe (a backend that checks its host later), only the request is checked.
  const RunSetup unprobed(backend, request, nullptr);
  EXPECT_FALSE(unprobed.refused.has_value());
}

}  // namespace
}  // namespace cordon
