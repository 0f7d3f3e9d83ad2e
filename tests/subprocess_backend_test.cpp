// The subprocess backend end to end, loaded through the real plugin. Cases that depend on
// how the tree is contained run twice: on the cgroup path and on the forced fallback path
// (the cordon-reaper subreaper helper), which this root machine would otherwise never use.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "claims_match.h"
#include "cordon/cancel.h"
#include "cordon/owner.h"
#include "cordon/plugin_registry.h"
#include "cordon/proc/cgroup2.h"
#include "cordon/result_json.h"
#include "figures_test_support.h"
#include "proc_test_support.h"
#include "request_limits_support.h"

namespace cordon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

enum class Path { kCgroup, kFallback };

std::string path_name(const ::testing::TestParamInfo<Path>& info) {
  return info.param == Path::kCgroup ? "Cgroup" : "Fallback";
}

class SubprocessBackendTest : public ::testing::TestWithParam<Path> {
 protected:
  void SetUp() override {
    registry_.discover({CORDON_TEST_PLUGIN_DIR});
    // The plugin reads the switch when the backend is created.
    if (GetParam() == Path::kFallback) ::setenv("CORDON_SUBPROCESS_FORCE_FALLBACK", "1", 1);
    auto backend = registry_.create("subprocess");
    ::unsetenv("CORDON_SUBPROCESS_FORCE_FALLBACK");
    ASSERT_TRUE(backend.has_value()) << backend.error().describe();
    backend_ = std::move(*backend);
    ASSERT_TRUE(backend_->probe().available) << backend_->probe().reason;
    const std::string mechanism(backend_->capabilities({}).find(Aspect::kTimeout)->mechanism);
    if (GetParam() == Path::kFallback) {
      ASSERT_EQ(mechanism, "deadline + subreaper helper");
    } else if (mechanism != "deadline + cgroup.kill") {
      // CI sets CORDON_REQUIRE_KERNEL_FEATURES=1 on hosts known to have a cgroup v2 tree,
      // so a wrong probe cannot turn these cases into silent skips there.
      if (std::getenv("CORDON_REQUIRE_KERNEL_FEATURES") != nullptr) {
        FAIL() << "no writable cgroup v2 here, but CORDON_REQUIRE_KERNEL_FEATURES is set";
      }
      GTEST_SKIP() << "no writable cgroup v2 here; the fallback cases cover this host";
    }
  }
  void TearDown() override { backend_.reset(); }

  RunResult run(const std::string& code, milliseconds timeout = seconds(10),
                RunObserver* observer = nullptr) {
    RunRequest req;
    req.code = code;
    req.timeout = timeout;
    return run(req, observer);
  }
  RunResult run(const RunRequest& req, RunObserver* observer = nullptr,
                const CancelToken& cancel = {}) {
    RunResult r = backend_->run(req, cancel, observer);
    EXPECT_EQ(r.backend.name, "subprocess");
    return r;
  }
  // Code that starts a grandchild in its own session (so a process-group kill would miss
  // it), waits until the grandchild wrote its pid, then does `then`.
  std::string with_orphan(const std::string& dir, const std::string& then) {
    return "setsid sh -c 'echo $$ > " + dir + "/p.tmp; mv " + dir + "/p.tmp " + dir +
           "/p; exec sleep 30' & while [ ! -s " + dir + "/p ]; do sleep 0.01; done; " + then;
  }
  static pid_t read_pid(const std::string& dir) {
    return std::stoi(testing::read_file(dir + "/p").value_or("0"));
  }

  PluginRegistry registry_;
  BackendPtr backend_;
};

TEST_P(SubprocessBackendTest, EchoIsOk) {
  const RunResult r = run("echo hello");
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.stdout_data, "hello\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_GE(r.wall_ms, 0);
  // A shell smaller than this test process may go unmeasured on the cgroup path (see
  // TheSpawnersMemoryIsNotTheCodesPeak); never 0.
  if (GetParam() == Path::kFallback) {
    EXPECT_TRUE(r.max_rss_kb.has_value());
  }
  EXPECT_NE(r.max_rss_kb, 0);
  EXPECT_TRUE(r.cpu_ms.has_value());
  EXPECT_FALSE(r.memory_peak_kb.has_value());
  ASSERT_FALSE(r.enforced.empty());
  EXPECT_EQ(r.enforced[0].aspect, Aspect::kTimeout);
}

// One code size limit for every backend: code that size runs (as a file: it is too long
// for argv), one byte more is refused before anything starts.
TEST_P(SubprocessBackendTest, CodeOfTheMaximumSizeRunsAndOneByteMoreIsRefused) {
  testing::expect_code_size_limit([this](const RunRequest& req) { return run(req); });
}

// Limits outside what the backend declares it can honour are refused before anything
// starts (they reached the kernel or runtime and failed there, or were dropped); both
// ends of each declared range really run.
TEST_P(SubprocessBackendTest, LimitsHoldTheDeclaredRangesAtBothEnds) {
  testing::expect_declared_ranges_hold(*backend_,
                                       [this](const RunRequest& req) { return run(req); });
}

TEST_P(SubprocessBackendTest, ExitCodeIsFailedNotTimedOut) {
  const RunResult r = run("exit 7");
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.ok());
}

TEST_P(SubprocessBackendTest, SleepPastTheDeadlineTimesOutPromptly) {
  const auto start = Clock::now();
  const RunResult r = run("echo before; sleep 5", milliseconds(200));
  EXPECT_LT(Clock::now() - start, seconds(2));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("");
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.stdout_data, "before\n");  // output from before the deadline is kept
  EXPECT_GE(r.wall_ms, 150);
}

// The main process is cordon's own child (or the helper's), reaped and measured after the
// kill: a timed-out run has its real figures and the SIGKILL it got.
TEST_P(SubprocessBackendTest, TimedOutRunIsMeasured) {
  const RunResult r = run(cordon_test::kSpinSh, milliseconds(500));
  ASSERT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("");
  cordon_test::expect_stopped_by_cordon(r);
  EXPECT_TRUE(r.cpu_ms.has_value());
  if (GetParam() == Path::kFallback) {
    EXPECT_TRUE(r.max_rss_kb.has_value());
  }
}

// The code is cloned from the process that runs it (CLONE_VM), and execve folds the peak
// of the memory it leaves into the new program's ru_maxrss: an inspector of 120 MiB saw
// "largest process 127152 KiB" for `id -u`. A spawner holding 300 MiB must not lend them
// to `true`'s figure.
TEST_P(SubprocessBackendTest, TheSpawnersMemoryIsNotTheCodesPeak) {
  constexpr std::size_t kHeld = 300u << 20;
  std::vector<char> held(kHeld);
  for (std::size_t i = 0; i < kHeld; i += 4096) held[i] = static_cast<char>(i);
  ASSERT_GT(testing::status_kb("VmHWM:"), 300 * 1024);
  const RunResult r = run("true");
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("");
  if (r.max_rss_kb) {
    EXPECT_LT(*r.max_rss_kb, 64 * 1024) << "the spawner's peak leaked in";
  }
  EXPECT_NE(held[4096], 1);  // keeps the pages alive up to here
}

// The other side of the bound above: code whose peak is larger than its spawner's is
// measured, on both paths.
TEST_P(SubprocessBackendTest, CodeLargerThanItsSpawnerIsMeasured) {
  const long spawner_kb = testing::status_kb("VmHWM:");
  const long code_kb = spawner_kb + 64 * 1024;
  RunRequest req;
  req.language = Language::kPython;
  req.timeout = seconds(30);
  req.code = "b = bytearray(" + std::to_string(code_kb) +
             " << 10)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\n";
  const RunResult r = run(req);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.stderr_data << r.error.value_or("");
  ASSERT_TRUE(r.max_rss_kb.has_value());
  EXPECT_GE(*r.max_rss_kb, code_kb);
}

TEST_P(SubprocessBackendTest, SetsidGrandchildIsGoneAfterTimeout) {
  testing::ScratchDir dir;
  const RunResult r = run(with_orphan(dir.path, "sleep 30"), milliseconds(1500));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  const pid_t orphan = read_pid(dir.path);
  ASSERT_GT(orphan, 0) << "the grandchild never started";
  // Gone, or a zombie: on the cgroup path the killed orphan is reparented to PID 1, which
  // on this machine kind never reaps (see process_dead). On the fallback path the helper
  // is its subreaper and reaps it, so there it is simply gone.
  EXPECT_TRUE(testing::eventually_dead(orphan, "sleep"));
}

TEST_P(SubprocessBackendTest, SetsidGrandchildIsGoneAfterNormalExit) {
  testing::ScratchDir dir;
  const RunResult r = run(with_orphan(dir.path, "exit 0"));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("");
  const pid_t orphan = read_pid(dir.path);
  ASSERT_GT(orphan, 0);
  EXPECT_TRUE(testing::eventually_dead(orphan, "sleep"));
}

// The backend keeps empty cgroups for the next run, but never one it had to kill: on this
// kernel a child started with CLONE_INTO_CGROUP in a cgroup that was ever killed is
// SIGKILLed at birth. Alternate runs that force a kill with plain runs; each plain run
// must still be ok (it would be signaled 9 if a killed cgroup were handed on).
TEST_P(SubprocessBackendTest, RunsAfterAKilledTreeStillStart) {
  for (int i = 0; i < 3; ++i) {
    testing::ScratchDir dir;
    const RunResult killed = run(with_orphan(dir.path, "exit 0"));
    EXPECT_EQ(killed.outcome, Outcome::kOk) << killed.error.value_or("");
    for (int j = 0; j < 2; ++j) {
      const RunResult plain = run("echo again");
      EXPECT_EQ(plain.outcome, Outcome::kOk) << "signal " << plain.signal;
      EXPECT_EQ(plain.stdout_data, "again\n");
    }
  }
  const RunResult timed_out = run("sleep 5", milliseconds(200));
  EXPECT_EQ(timed_out.outcome, Outcome::kTimedOut);
  const RunResult after = run("echo after");
  EXPECT_EQ(after.outcome, Outcome::kOk) << "signal " << after.signal;
}

TEST_P(SubprocessBackendTest, FloodReturnsPromptlyTruncatedWithBoundedMemory) {
  const long rss_before = testing::status_kb("VmRSS:");
  const long hwm_before = testing::status_kb("VmHWM:");
  const auto start = Clock::now();
  RunResult r = run("yes", seconds(1));
  EXPECT_LT(Clock::now() - start, seconds(4));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_EQ(r.stdout_data.size(), kDefaultOutputBytes);
  const long rss_after = testing::status_kb("VmRSS:");
  const long hwm_after = testing::status_kb("VmHWM:");
  // The kept output (1 MiB per stream at most) plus a small constant; `yes` wrote far more.
  constexpr long kCapsKb = 2 * (kDefaultOutputBytes / 1024);
  EXPECT_LT(rss_after - rss_before, kCapsKb + 8 * 1024) << rss_before << " -> " << rss_after;
  EXPECT_LT(hwm_after - hwm_before, kCapsKb + 8 * 1024) << hwm_before << " -> " << hwm_after;
}

TEST_P(SubprocessBackendTest, TenMegabytesDrainWellBeforeTheDeadline) {
  const auto start = Clock::now();
  const RunResult r =
      run("head -c 10485760 /dev/zero; head -c 10485760 /dev/zero >&2; exit 0", seconds(30));
  EXPECT_LT(Clock::now() - start, seconds(15));
  EXPECT_EQ(r.outcome, Outcome::kOk);
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_TRUE(r.stderr_truncated);
  EXPECT_EQ(r.stdout_data.size(), kDefaultOutputBytes);
}

TEST_P(SubprocessBackendTest, NonUtf8OutputGivesValidJson) {
  const RunResult r = run("printf 'a\\377\\376b'");
  EXPECT_EQ(r.stdout_data,
            "a\xff\xfe"
            "b");
  const std::string text = to_json(r).dump();  // throws on invalid UTF-8
  const auto parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed.at("outcome"), "ok");
  EXPECT_EQ(parsed.at("stdout_lossy"), true);
}

TEST_P(SubprocessBackendTest, CatWithoutStdinSeesEof) {
  const RunResult r = run("cat", seconds(5));
  EXPECT_EQ(r.outcome, Outcome::kOk);
  EXPECT_EQ(r.stdout_data, "");
}

TEST_P(SubprocessBackendTest, StdinBytesAreDelivered) {
  RunRequest req;
  req.code = "cat; echo; wc -c < /dev/null";
  req.stdin_data = "line one\nline two";
  const RunResult r = run(req);
  EXPECT_EQ(r.outcome, Outcome::kOk);
  EXPECT_EQ(r.stdout_data, "line one\nline two\n0\n");
}

TEST_P(SubprocessBackendTest, KilledBySignalIsSignaled) {
  const RunResult r = run("kill -SEGV $$");
  EXPECT_EQ(r.outcome, Outcome::kSignaled);
  EXPECT_EQ(r.signal, 11);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_FALSE(r.timed_out);
}

TEST_P(SubprocessBackendTest, CancelFromAnotherThread) {
  CancelSource source;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(200));
    source.cancel();
  });
  RunRequest req;
  req.code = "sleep 30";
  req.timeout = seconds(20);
  const auto start = Clock::now();
  const RunResult r = run(req, nullptr, source.token());
  canceller.join();
  EXPECT_LT(Clock::now() - start, seconds(3));
  EXPECT_EQ(r.outcome, Outcome::kCancelled) << r.error.value_or("");
  EXPECT_FALSE(r.timed_out);
}

TEST_P(SubprocessBackendTest, ConcurrentRunsAreIndependent) {
  std::vector<std::thread> threads;
  std::vector<RunResult> results(4);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      RunRequest req;
      req.code = "sleep 0.2; echo run" + std::to_string(i) + "; exit " + std::to_string(i);
      req.timeout = seconds(20);
      results[i] = backend_->run(req, {}, nullptr);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(results[i].stdout_data, "run" + std::to_string(i) + "\n");
    EXPECT_EQ(results[i].exit_code, i);
    EXPECT_EQ(results[i].outcome, i == 0 ? Outcome::kOk : Outcome::kFailed);
  }
}

TEST_P(SubprocessBackendTest, InvalidRequestIsASandboxError) {
  // The interpreter comes from a fixed PATH, so an exec failure cannot be forced through a
  // request; proc_spawn_test and proc_reaper_test check that execve errors come back with
  // the reason on both paths. Here: a request validate() refuses.
  RunRequest req;
  req.code = "true";
  req.input_files = {{"../escape", "x"}};  // refused by validate(): a sandbox_error
  const RunResult r = run(req);
  EXPECT_EQ(r.outcome, Outcome::kSandboxError);
  ASSERT_TRUE(r.error.has_value());
}

// ---- behaviour independent of the containment path (cgroup path only, or either) ----

class SubprocessBackendOnce : public SubprocessBackendTest {};

TEST_P(SubprocessBackendOnce, TimeoutZeroMeansFiveSeconds) {
  const RunResult quick = run("sleep 1", milliseconds(0));
  EXPECT_EQ(quick.outcome, Outcome::kOk);
  const auto start = Clock::now();
  const RunResult slow = run("sleep 30", milliseconds(0));
  const auto took = Clock::now() - start;
  EXPECT_EQ(slow.outcome, Outcome::kTimedOut);
  EXPECT_GE(took, milliseconds(4900));
  EXPECT_LT(took, seconds(9));
}

TEST_P(SubprocessBackendOnce, PythonRunsFromTheFixedPathNotTheCallersPath) {
  testing::ScratchDir shim;
  {
    std::ofstream f(shim.path + "/python3");
    f << "#!/bin/sh\necho shim\n";
  }
  ::chmod((shim.path + "/python3").c_str(), 0755);
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (shim.path + ":" + old_path).c_str(), 1);
  RunRequest req;
  req.language = Language::kPython;
  req.code = "print(1+1)";
  req.timeout = seconds(20);
  const RunResult r = run(req);
  ::setenv("PATH", old_path.c_str(), 1);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.stderr_data << r.error.value_or("");
  EXPECT_EQ(r.stdout_data, "2\n");
}

TEST_P(SubprocessBackendOnce, CallerEnvironmentIsNotPassed) {
  ::setenv("CORDON_TEST_SECRET", "hunter2", 1);
  RunRequest req;
  req.code = "echo \"[$CORDON_TEST_SECRET][$EXTRA][$PATH][$LANG]\"; cd \"$HOME\" && touch ok";
  req.env = {{"EXTRA", "given"}};
  const RunResult r = run(req);
  ::unsetenv("CORDON_TEST_SECRET");
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "[][given][/usr/local/bin:/usr/bin:/bin][C.UTF-8]\n");
}

TEST_P(SubprocessBackendOnce, InputFilesAndArtifacts) {
  RunRequest req;
  req.code =
      "cat data/in.txt > out.txt; echo more >> out.txt; ln -s /etc/passwd link.txt; "
      "ln -s /etc outside";
  req.input_files = {{"data/in.txt", "abc\n"}};
  req.artifact_globs = {"out*", "link*", "outside/*"};
  const RunResult r = run(req);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.stderr_data << r.error.value_or("");
  // link.txt and outside/* are symlinks: not followed.
  ASSERT_EQ(r.artifacts.size(), 1u);
  EXPECT_EQ(r.artifacts[0].path, "out.txt");
  EXPECT_EQ(r.artifacts[0].content, "abc\nmore\n");
  EXPECT_EQ(r.artifacts[0].size, 9u);
}

TEST_P(SubprocessBackendOnce, ObserverSeesStatesInOrderAndEveryChunk) {
  struct Recorder : RunObserver {
    std::vector<RunState> states;
    std::string out, err;
    void on_state(RunState s) override { states.push_back(s); }
    void on_output(Stream s, std::string_view chunk, bool kept) override {
      if (kept) (s == Stream::kStdout ? out : err).append(chunk);
    }
  } rec;
  const RunResult r = run("echo one; echo two >&2; sleep 0.1; echo three", seconds(10), &rec);
  EXPECT_EQ(r.outcome, Outcome::kOk);
  const std::vector<RunState> want = {RunState::kPreparing, RunState::kRunning, RunState::kStopping,
                                      RunState::kFinished};
  EXPECT_EQ(rec.states, want);
  EXPECT_EQ(rec.out, r.stdout_data);
  EXPECT_EQ(rec.err, "two\n");
}

// A run reports as enforced exactly what capabilities() claim for its limits, on both
// ways of containing the tree: the claim once said cgroup.kill on hosts where every run
// fell back to the helper (issue #14).
TEST_P(SubprocessBackendTest, ARunEnforcesWhatCapabilitiesClaim) {
  Limits asked;
  asked.memory_bytes = 512U << 20;
  asked.cpu_time = seconds(3);
  if (::geteuid() != 0) asked.max_processes = 64;  // root: refused (RLIMIT_NPROC ignores it)
  cordon::testing::expect_runs_enforce_what_is_claimed(
      [&](const RunRequest& req) { return run(req); }, *backend_, {Limits{}, asked});
}

TEST_P(SubprocessBackendOnce, CapabilitiesClaimOnlyTimeoutAndOutput) {
  const Capabilities caps = backend_->capabilities({});
  ASSERT_EQ(caps.aspects.size(), std::size(kAllAspects));
  EXPECT_EQ(caps.isolation_score(), 0);
  EXPECT_FALSE(caps.isolates());
  EXPECT_EQ(caps.level(Aspect::kTimeout), Enforcement::kEnforced);
  EXPECT_EQ(caps.level(Aspect::kOutput), Enforcement::kEnforced);
  for (const Aspect a :
       {Aspect::kNetwork, Aspect::kFilesystem, Aspect::kEnvironment, Aspect::kProcessTree,
        Aspect::kSyscallFilter, Aspect::kMemory, Aspect::kProcesses, Aspect::kCpu, Aspect::kDisk}) {
    EXPECT_EQ(caps.level(a), Enforcement::kNone) << to_string(a);
    EXPECT_FALSE(caps.find(a)->detail.empty());
  }
  Limits limits;
  limits.memory_bytes = 256u << 20;
  limits.max_processes = 10;
  const Capabilities with = backend_->capabilities(limits);
  EXPECT_EQ(with.level(Aspect::kMemory), Enforcement::kPartial);
  EXPECT_EQ(with.find(Aspect::kMemory)->mechanism, "RLIMIT_AS per process");
  EXPECT_EQ(with.level(Aspect::kProcesses),
            ::geteuid() == 0 ? Enforcement::kNone : Enforcement::kPartial);
}

TEST_P(SubprocessBackendOnce, MemoryRlimitIsAppliedAndReported) {
  RunRequest req;
  req.code = "ulimit -v";
  req.limits.memory_bytes = 512u << 20;
  const RunResult r = run(req);
  EXPECT_EQ(r.outcome, Outcome::kOk);
  EXPECT_EQ(r.stdout_data, "524288\n");
  bool reported = false;
  for (const auto& e : r.enforced) reported |= e.aspect == Aspect::kMemory;
  EXPECT_TRUE(reported);
}

// Issue #11 item 15: the empty cgroups the backend keeps for the next run can be removed
// under it (any rmdir of an empty group succeeds: another cordon's sweep, a runtime's
// cleanup, an admin). The next run must then make a fresh one, not fail with
// "clone: No such file or directory" from clone3(CLONE_INTO_CGROUP) into the dead group.
// Only the cgroup path keeps groups (SubprocessBackendOnce runs on it alone).
TEST_P(SubprocessBackendOnce, RunsAfterItsKeptCgroupWasRemovedStillStart) {
  const auto parent = proc::own_cgroup2_dir();
  ASSERT_TRUE(parent.has_value()) << parent.error().describe();
  for (int i = 0; i < 3; ++i) {
    const RunResult first = run("echo one");
    ASSERT_EQ(first.outcome, Outcome::kOk) << first.error.value_or("");
    int removed = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(*parent, ec)) {
      const std::string name = entry.path().filename();
      if (name.starts_with(owned_prefix("cordon-")) && ::rmdir(entry.path().c_str()) == 0) {
        ++removed;
      }
    }
    EXPECT_GE(removed, 1) << "the backend kept no empty cgroup under " << parent->string();
    const RunResult next = run("echo two");
    EXPECT_EQ(next.outcome, Outcome::kOk) << next.error.value_or("");
    EXPECT_EQ(next.stdout_data, "two\n");
  }
}

namespace fs = std::filesystem;

// Creating the backend, probing it, asking its capabilities and a plan (what `cordon
// backends` and `cordon plan` do) touch nothing: a dead cordon's run dir is still there.
// prepare(), called through the plugin's C descriptor (ABI 3.1), sweeps it; a second call
// does nothing more, and a run after it still works.
TEST(SubprocessPrepare, OnlyPrepareSweepsWhatADeadCordonLeft) {
  const testing::ScratchDir parent;
  ::setenv("CORDON_RUN_DIR", parent.path.c_str(), 1);
  const fs::path stale =
      fs::path(parent.path) / ("cordon-run-" + std::to_string(testing::dead_pid()) + "-AbCdEf");
  ASSERT_TRUE(fs::create_directories(stale / "work"));
  const std::set<std::string> before = testing::tree_of(parent.path);

  PluginRegistry registry;
  registry.discover({CORDON_TEST_PLUGIN_DIR});
  auto backend = registry.create("subprocess");
  ASSERT_TRUE(backend.has_value()) << backend.error().describe();
  EXPECT_TRUE((*backend)->probe().available) << (*backend)->probe().reason;
  EXPECT_FALSE((*backend)->capabilities(Limits{}).aspects.empty());
  RunRequest request;
  request.code = "echo planned";
  EXPECT_TRUE((*backend)->describe_plan(request));
  EXPECT_EQ(testing::tree_of(parent.path), before) << "construction, probe or plan touched it";

  ASSERT_TRUE((*backend)->prepare());
  EXPECT_FALSE(fs::exists(stale)) << "prepare() did not sweep " << stale;
  EXPECT_TRUE((*backend)->prepare()) << "a second prepare() is a no-op";
  const RunResult r = (*backend)->run(request, {}, nullptr);
  EXPECT_EQ(r.stdout_data, "planned\n") << r.error.value_or("");
  ::unsetenv("CORDON_RUN_DIR");
}

// A run nobody prepared for prepares by itself: the same sweep happens before it.
TEST(SubprocessPrepare, ARunPreparesWhenNobodyDid) {
  const testing::ScratchDir parent;
  ::setenv("CORDON_RUN_DIR", parent.path.c_str(), 1);
  const fs::path stale =
      fs::path(parent.path) / ("cordon-run-" + std::to_string(testing::dead_pid()) + "-XyZxYz");
  ASSERT_TRUE(fs::create_directories(stale));
  PluginRegistry registry;
  registry.discover({CORDON_TEST_PLUGIN_DIR});
  auto backend = registry.create("subprocess");
  ASSERT_TRUE(backend.has_value()) << backend.error().describe();
  RunRequest request;
  request.code = "echo ran";
  const RunResult r = (*backend)->run(request, {}, nullptr);
  EXPECT_EQ(r.stdout_data, "ran\n") << r.error.value_or("");
  EXPECT_FALSE(fs::exists(stale));
  ::unsetenv("CORDON_RUN_DIR");
}

INSTANTIATE_TEST_SUITE_P(Paths, SubprocessBackendTest,
                         ::testing::Values(Path::kCgroup, Path::kFallback), path_name);
INSTANTIATE_TEST_SUITE_P(Paths, SubprocessBackendOnce, ::testing::Values(Path::kCgroup), path_name);

}  // namespace
}  // namespace cordon
