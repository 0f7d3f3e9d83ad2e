// The audit's pure parts: the catalogue as data, the judges fed evidence by hand, and the
// reports' JSON, binding and exit status. No backend runs here (audit_controls_test and
// the `audit_namespace` CTest run the attempts).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <set>
#include <string>
#include <vector>

#include "audit/catalogue.h"
#include "audit/report.h"
#include "audit/verdict.h"
#include "cordon/net/net_policy.h"
#include "proc_test_support.h"

namespace cordon::audit {
namespace {

// The names of the {{name}} placeholders in `code` (name: [a-z_]+), in order. A loop, not
// std::regex: <regex> was 4 s of this file's 11 s of compile CPU (issue #13).
std::vector<std::string> placeholder_names(const std::string& code) {
  std::vector<std::string> names;
  for (std::size_t at = code.find("{{"); at != std::string::npos; at = code.find("{{", at + 1)) {
    const std::size_t begin = at + 2;
    std::size_t end = begin;
    while (end < code.size() && ((code[end] >= 'a' && code[end] <= 'z') || code[end] == '_')) {
      ++end;
    }
    if (end > begin && code.compare(end, 2, "}}") == 0) {
      names.push_back(code.substr(begin, end - begin));
      at = end + 1;  // the next search starts after the closing braces
    }
  }
  return names;
}

Catalogue catalogue() {
  Result<Catalogue> c = builtin_catalogue();
  EXPECT_TRUE(c.has_value()) << c.error().describe();
  return c.value_or(Catalogue{});
}

TEST(AuditCatalogue, HasAtLeast25AttemptsCoveringEveryThreatTheIssueNames) {
  const Catalogue c = catalogue();
  EXPECT_GE(c.attempts.size(), 25u);
  // The design's five, and one attempt per class of threat the issue lists.
  for (const char* id : {"net-loopback-tcp",
                         "env-dump",
                         "res-fork-bomb",
                         "res-cpu-spin",
                         "fs-write-outside",
                         "net-abstract-unix",
                         "net-path-unix",
                         "net-metadata-route",
                         "net-egress-route",
                         "net-loopback-udp",
                         "env-other-processes",
                         "cred-file",
                         "fs-read-host-file",
                         "fs-delete-host-file",
                         "res-memory-bomb",
                         "res-disk-fill",
                         "res-output-flood",
                         "proc-orphan-setsid",
                         "proc-daemon-double-fork",
                         "sys-ptrace",
                         "sys-mount",
                         "sys-unshare",
                         "sys-keyctl",
                         "sys-bpf",
                         "sys-perf-event-open",
                         "sys-io-uring",
                         "sys-userfaultfd",
                         "priv-capabilities",
                         "priv-no-new-privs",
                         "fs-devices",
                         "sys-syslog",
                         "proc-signal-host",
                         "proc-kill-all",
                         "fs-kernel-tunable",
                         "fs-cross-run"}) {
    EXPECT_NE(c.find(id), nullptr) << id;
  }
  EXPECT_TRUE(c.hash.starts_with("sha256:"));
}

TEST(AuditCatalogue, AttemptsThatWouldActOnTheHostAreMarkedSo) {
  const Catalogue c = catalogue();
  for (const char* id : {"res-fork-bomb", "proc-kill-all", "res-disk-fill", "res-memory-bomb",
                         "sys-mount", "fs-kernel-tunable", "fs-delete-host-file"}) {
    ASSERT_NE(c.find(id), nullptr) << id;
    EXPECT_TRUE(c.find(id)->host_acting) << id;
  }
  // Limits the resource judges compare against are in the data.
  EXPECT_TRUE(c.find("res-memory-bomb")->limits.memory_bytes.has_value());
  EXPECT_TRUE(c.find("res-fork-bomb")->limits.max_processes.has_value());
  EXPECT_TRUE(c.find("res-disk-fill")->limits.scratch_bytes.has_value());
}

TEST(AuditCatalogue, HostActingAttemptsNeverHaveTheirControlRunWhereNothingIsolates) {
  for (const Attempt& a : catalogue().attempts) {
    if (!a.host_acting) continue;
    EXPECT_NE(a.control, Control::kSubprocess) << a.id;
    EXPECT_NE(a.control, Control::kRequestEnv) << a.id;
  }
  // Those no weakened backend can reach the host target of: their probe is pointed at a
  // target inside the sandbox (audit_controls_test).
  const Catalogue c = catalogue();
  for (const char* id : {"fs-delete-host-file", "fs-kernel-tunable", "proc-kill-all"}) {
    ASSERT_NE(c.find(id), nullptr) << id;
    EXPECT_EQ(c.find(id)->control, Control::kLocalTarget) << id;
  }
  EXPECT_EQ(to_string(Control::kLocalTarget), "local_target");
  // Through these placeholders (kill -1 has no target: its victim is started beside it).
  EXPECT_NE(c.find("fs-delete-host-file")->code.find("{{host_dir}}"), std::string::npos);
  EXPECT_NE(c.find("fs-kernel-tunable")->code.find("{{tunable}}"), std::string::npos);
}

// The egress proxy's bypasses (issue #16) run with an allow-list; the positive control puts
// the target on the list, or the proxy's own answer proves the probe ran.
TEST(AuditCatalogue, AllowListAttemptsCarryTheirListsAndControls) {
  const Catalogue c = catalogue();
  for (const char* id : {"net-allow-direct-ip", "net-allow-rebind-loopback",
                         "net-allow-ipv6-mapped", "net-allow-denied-port"}) {
    const Attempt* a = c.find(id);
    ASSERT_NE(a, nullptr) << id;
    EXPECT_FALSE(a->allow_net.empty()) << id;
    EXPECT_EQ(a->control, Control::kAllowList) << id;
    EXPECT_FALSE(a->control_allow_net.empty()) << id;
    EXPECT_EQ(a->judge, Judge::kTcpListener) << id;
  }
  for (const char* id : {"net-allow-second-host", "net-allow-dns-via-proxy"}) {
    const Attempt* a = c.find(id);
    ASSERT_NE(a, nullptr) << id;
    EXPECT_FALSE(a->allow_net.empty()) << id;
    EXPECT_EQ(a->require, "answered") << id;  // the proxy's answer: the probe ran
  }
  // Each list parses as the proxy will read it, once its placeholders are filled.
  for (const Attempt& a : c.attempts) {
    for (const auto* list : {&a.allow_net, &a.control_allow_net}) {
      std::vector<std::string> filled;
      for (std::string entry : *list) {
        for (std::size_t at; (at = entry.find("{{tcp_port}}")) != std::string::npos;) {
          entry.replace(at, 12, "4242");
        }
        filled.push_back(entry);
      }
      EXPECT_TRUE(net::NetPolicy::make(filled, {}).has_value()) << a.id;
    }
  }
  const auto refused =
      parse_catalogue(R"({"version": 1, "attempts": [{"id": "x", "class": "network",
      "aspect": "network", "title": "t", "language": "sh", "judge": "tcp_listener",
      "control": "allow_list", "allow_net": ["a.test"], "code": "true"}]})");
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("control_allow_net"), std::string::npos);
}

TEST(AuditCatalogue, EveryPlaceholderIsOneTheAuditFills) {
  const std::set<std::string> known = {
      "tcp_port",         "udp_port",      "abstract_name", "unix_path",  "host_dir",
      "credentials_file", "marker",        "marker_num",    "victim_pid", "secret",
      "tunable",          "tunable_value", "session_mark"};
  for (const Attempt& a : catalogue().attempts) {
    for (const std::string* code : {&a.code, &a.peer_code}) {
      for (const std::string& name : placeholder_names(*code)) {
        EXPECT_TRUE(known.contains(name)) << a.id << ": " << name;
      }
    }
  }
}

TEST(AuditCatalogue, MalformedEntriesAreRefusedWithTheAttemptNamed) {
  const auto bad_judge = parse_catalogue(
      R"({"version":1,"attempts":[{"id":"x","class":"c","aspect":"network","title":"t",)"
      R"("language":"sh","judge":"telepathy","control":"none","code":"true"}]})");
  ASSERT_FALSE(bad_judge.has_value());
  EXPECT_NE(bad_judge.error().message.find("attempt x"), std::string::npos);
  EXPECT_FALSE(parse_catalogue(R"({"version":1,"attempts":[{"id":"x"}]})").has_value());
  const auto dup = parse_catalogue(
      R"({"version":1,"attempts":[)"
      R"({"id":"x","class":"c","aspect":"network","title":"t","language":"sh","judge":"printed","control":"none","code":"a"},)"
      R"({"id":"x","class":"c","aspect":"network","title":"t","language":"sh","judge":"printed","control":"none","code":"b"}]})");
  EXPECT_FALSE(dup.has_value());
  // A cross-session attempt: python, a victim, and the same-session control; nothing else
  // takes that control.
  const std::string head =
      R"({"version":1,"attempts":[{"id":"s","class":"sessions","aspect":"network","title":"t",)";
  EXPECT_TRUE(parse_catalogue(head + R"("language":"python","judge":"cross_session",)" +
                              R"("control":"same_session","code":"a","peer_code":"b"}]})")
                  .has_value());
  for (const std::string& wrong :
       {std::string(R"("language":"python","judge":"cross_session","control":"same_session",)"
                    R"("code":"a"}]})"),
        std::string(R"("language":"sh","judge":"cross_session","control":"same_session",)"
                    R"("code":"a","peer_code":"b"}]})"),
        std::string(R"("language":"python","judge":"cross_session","control":"none",)"
                    R"("code":"a","peer_code":"b"}]})"),
        std::string(R"("language":"python","judge":"printed","control":"same_session",)"
                    R"("code":"a"}]})"),
        std::string(R"("language":"python","judge":"cross_session","control":"same_session",)"
                    R"("code":"a","peer_prelude":"nope"}]})")}) {
    const auto refused = parse_catalogue(head + wrong);
    ASSERT_FALSE(refused.has_value()) << wrong;
    EXPECT_NE(refused.error().message.find("attempt s"), std::string::npos)
        << refused.error().message;
  }
}

// Seen while writing audit_catalogue_fuzz: numbers were read with get<int>() / value(..., 5000),
// undefined behaviour for a float out of range, and get<std::uint64_t>() wrapped a
// negative limit to 16 EiB. Each is refused, naming the field.
TEST(AuditCatalogue, NumbersOutOfRangeAreRefused) {
  const std::string entry =
      R"({"id":"x","class":"c","aspect":"network","title":"t","language":"sh",)"
      R"("judge":"printed","control":"none","code":"true")";
  const auto with = [&](const std::string& version, const std::string& extra) {
    return parse_catalogue(R"({"version":)" + version + R"(,"attempts":[)" + entry + extra + "}]}");
  };
  ASSERT_TRUE(with("1", R"(,"timeout_ms":2000,"limits":{"memory_bytes":1048576})").has_value());
  EXPECT_FALSE(with("1e300", "").has_value());
  const auto timeout = with("1", R"(,"timeout_ms":1e300)");
  ASSERT_FALSE(timeout.has_value());
  EXPECT_NE(timeout.error().message.find("timeout_ms"), std::string::npos);
  const auto memory = with("1", R"(,"limits":{"memory_bytes":-1})");
  ASSERT_FALSE(memory.has_value());
  EXPECT_NE(memory.error().message.find("memory_bytes"), std::string::npos);
  EXPECT_FALSE(with("1", R"(,"limits":{"output_bytes":1.5})").has_value());
  EXPECT_FALSE(with("1", R"(,"limits":7)").has_value());
}

// ---- judges ----

Attempt attempt_with(Judge judge) {
  Attempt a;
  a.id = "t";
  a.judge = judge;
  return a;
}

Finding judged(const Attempt& a, RunResult run, Evidence ev = {}) {
  ev.run = &run;
  return judge(a, ev);
}

RunResult ran(std::string out, Outcome outcome = Outcome::kOk) {
  RunResult r;
  r.outcome = outcome;
  r.stdout_data = std::move(out);
  return r;
}

TEST(AuditJudge, PrintedNeedsAVerdictLineAndEscapedWins) {
  const Attempt a = attempt_with(Judge::kPrinted);
  EXPECT_EQ(judged(a, ran("BLOCKED x EPERM\n")).status, AttemptStatus::kBlocked);
  const Finding e = judged(a, ran("BLOCKED one\nESCAPED two returned 0\n"));
  EXPECT_EQ(e.status, AttemptStatus::kEscaped);
  EXPECT_EQ(e.evidence, "two returned 0");
  // A probe that crashed proves nothing.
  RunResult crashed = ran("", Outcome::kFailed);
  crashed.stderr_data = "Traceback: boom\n";
  const Finding err = judged(a, crashed);
  EXPECT_EQ(err.status, AttemptStatus::kError);
  EXPECT_NE(err.evidence.find("Traceback"), std::string::npos);
}

TEST(AuditJudge, HostSideJudgesBelieveTheHostNotThePrintout) {
  const Attempt a = attempt_with(Judge::kTcpListener);
  Evidence reached;
  reached.listener_reached = true;
  // The code says it was refused; the host saw the connection: escaped.
  EXPECT_EQ(judged(a, ran("BLOCKED refused\n"), reached).status, AttemptStatus::kEscaped);
  EXPECT_EQ(judged(a, ran("BLOCKED refused\n")).status, AttemptStatus::kBlocked);
  // Nothing reached the host, but the probe never ran: not blocked.
  EXPECT_EQ(judged(a, ran("", Outcome::kFailed)).status, AttemptStatus::kError);
  RunResult sandbox = ran("");
  sandbox.outcome = Outcome::kSandboxError;
  EXPECT_EQ(judged(a, sandbox, reached).status, AttemptStatus::kError);
}

TEST(AuditJudge, CanaryAnywhereInTheOutputIsAnEscape) {
  Attempt a = attempt_with(Judge::kCanary);
  Evidence ev;
  ev.secrets = {{"environment", "s3cr3t"}};
  const Finding f = judged(a, ran("PATH=/bin\nX=s3cr3t\ndone\n"), ev);
  EXPECT_EQ(f.status, AttemptStatus::kEscaped);
  EXPECT_NE(f.evidence.find("environment"), std::string::npos);
  EXPECT_EQ(judged(a, ran("PATH=/bin\ndone\n"), ev).status, AttemptStatus::kBlocked);
  a.require = "done";
  EXPECT_EQ(judged(a, ran("PATH=/bin\n"), ev).status, AttemptStatus::kError);
}

TEST(AuditJudge, SurvivorsVictimTunableAndFiles) {
  Evidence ev;
  ev.survivors = 2;
  EXPECT_EQ(judged(attempt_with(Judge::kSurvivors), ran("STARTED\n"), ev).status,
            AttemptStatus::kEscaped);
  Attempt started = attempt_with(Judge::kSurvivors);
  started.require = "STARTED";
  EXPECT_EQ(judged(started, ran("")).status, AttemptStatus::kError);
  EXPECT_EQ(judged(started, ran("STARTED\n")).status, AttemptStatus::kBlocked);
  Evidence dead;
  dead.victim_alive = false;
  EXPECT_EQ(judged(attempt_with(Judge::kVictim), ran("done\n"), dead).status,
            AttemptStatus::kEscaped);
  Evidence tun;
  tun.tunable_before = "10";
  tun.tunable_after = "11";
  EXPECT_EQ(judged(attempt_with(Judge::kTunable), ran("done\n"), tun).status,
            AttemptStatus::kEscaped);
  tun.tunable_after = "10";
  EXPECT_EQ(judged(attempt_with(Judge::kTunable), ran("done\n"), tun).status,
            AttemptStatus::kBlocked);
  Evidence gone;
  gone.file_intact = false;
  EXPECT_EQ(judged(attempt_with(Judge::kHostFileIntact), ran("done\n"), gone).status,
            AttemptStatus::kEscaped);
}

// Cross-session attempts (issue #41): the victim session's own report and the host's look
// at its workspace count before the probe's printout; a victim that never got ready
// proves nothing.
TEST(AuditJudge, CrossSessionBelievesTheVictimAndTheHost) {
  Attempt a = attempt_with(Judge::kCrossSession);
  a.require = "";
  const std::string ok = "cordon-audit-peer-ok\n";
  Evidence quiet;
  quiet.peer_output = ok;
  quiet.secrets = {{"other session's", "cordon-audit-peer-abc"}};
  EXPECT_EQ(judged(a, ran("BLOCKED nothing visible\n"), quiet).status, AttemptStatus::kBlocked);
  Evidence not_ready = quiet;
  not_ready.peer_output = "Traceback: no python\n";
  EXPECT_EQ(judged(a, ran("BLOCKED nothing visible\n"), not_ready).status, AttemptStatus::kError);
  Evidence touched = quiet;
  touched.peer_output = ok + "cordon-audit-peer-touched: its process was killed\n";
  const Finding t = judged(a, ran("BLOCKED kill EPERM\n"), touched);
  EXPECT_EQ(t.status, AttemptStatus::kEscaped);
  EXPECT_NE(t.evidence.find("its process was killed"), std::string::npos) << t.evidence;
  Evidence ended = quiet;
  ended.peer_ended = true;
  EXPECT_EQ(judged(a, ran("BLOCKED x\n"), ended).status, AttemptStatus::kEscaped);
  Evidence changed = quiet;
  changed.peer_file_intact = false;
  EXPECT_EQ(judged(a, ran("BLOCKED x\n"), changed).status, AttemptStatus::kEscaped);
  const Finding leaked = judged(a, ran("read cordon-audit-peer-abc\n"), quiet);
  EXPECT_EQ(leaked.status, AttemptStatus::kEscaped);
  EXPECT_NE(leaked.evidence.find("other session's"), std::string::npos) << leaked.evidence;
  EXPECT_EQ(judged(a, ran("ESCAPED ptrace attached\n"), quiet).status, AttemptStatus::kEscaped);
  EXPECT_EQ(judged(a, ran("", Outcome::kFailed), quiet).status, AttemptStatus::kError);
}

// A cross-session attempt against a backend without sessions tests nothing it claims; any
// other skipped attempt still leaves its claim unproven.
TEST(AuditJudge, OnlyASkippedSessionAttemptIsMoot) {
  AttemptVerdict v;
  v.status = AttemptStatus::kSkipped;
  v.threat_class = std::string(kSessionClass);
  EXPECT_TRUE(v.moot());
  v.status = AttemptStatus::kBlocked;
  EXPECT_FALSE(v.moot());
  v.status = AttemptStatus::kSkipped;
  v.threat_class = "processes";
  EXPECT_FALSE(v.moot());
}

TEST(AuditJudge, ResourceJudges) {
  Attempt spin = attempt_with(Judge::kDeadline);
  spin.timeout = std::chrono::milliseconds(1000);
  RunResult timed = ran("", Outcome::kTimedOut);
  timed.wall_ms = 1010;
  EXPECT_EQ(judged(spin, timed).status, AttemptStatus::kBlocked);
  EXPECT_EQ(judged(spin, ran("", Outcome::kOk)).status, AttemptStatus::kEscaped);
  timed.wall_ms = 60000;
  EXPECT_EQ(judged(spin, timed).status, AttemptStatus::kEscaped);

  Attempt mem = attempt_with(Judge::kMemory);
  mem.limits.memory_bytes = 128u << 20;
  RunResult oom = ran("", Outcome::kLimitExceeded);
  oom.oom_killed = true;
  EXPECT_EQ(judged(mem, oom).status, AttemptStatus::kBlocked);
  EXPECT_EQ(judged(mem, ran("ESCAPED held 256 MiB\n")).status, AttemptStatus::kEscaped);
  RunResult big = ran("", Outcome::kSignaled);
  big.max_rss_kb = 300 * 1024;
  EXPECT_EQ(judged(mem, big).status, AttemptStatus::kEscaped);

  Attempt fork = attempt_with(Judge::kProcessPeak);
  fork.limits.max_processes = 64;
  Evidence peak;
  peak.process_peak = 64;
  EXPECT_EQ(judged(fork, ran("BLOCKED fork refused\n"), peak).status, AttemptStatus::kBlocked);
  peak.process_peak = 200;
  EXPECT_EQ(judged(fork, ran("BLOCKED fork refused\n"), peak).status, AttemptStatus::kEscaped);

  Attempt disk = attempt_with(Judge::kDisk);
  disk.limits.scratch_bytes = 64u << 20;
  Evidence host_file;
  host_file.host_file_bytes = 100u << 20;
  EXPECT_EQ(judged(disk, ran("BLOCKED No space\n"), host_file).status, AttemptStatus::kEscaped);
  EXPECT_EQ(judged(disk, ran("BLOCKED No space\n")).status, AttemptStatus::kBlocked);

  Attempt out = attempt_with(Judge::kOutput);
  out.limits.output_bytes = 1024;
  out.timeout = std::chrono::milliseconds(1000);
  RunResult cut = ran(std::string(1024, 'x'), Outcome::kTimedOut);
  cut.stdout_truncated = true;
  Evidence prompt;
  prompt.run_ms = 1400;
  EXPECT_EQ(judged(out, cut, prompt).status, AttemptStatus::kBlocked);
  EXPECT_EQ(judged(out, ran(std::string(4096, 'x'))).status, AttemptStatus::kEscaped);
  EXPECT_EQ(judged(out, ran("x")).status, AttemptStatus::kError);  // no flood: broken probe
  // Still flooding at the deadline: a timeout, promptly, or the timeout did not hold.
  Evidence late;
  late.run_ms = 11000;
  EXPECT_EQ(judged(out, cut, late).status, AttemptStatus::kEscaped);
  // An emulated guest: a waiting run is back 3 s after its deadline, so 5 s is prompt there;
  // 15 s is not.
  Evidence slow_host;
  slow_host.baseline_ms = 3000;
  slow_host.run_ms = 5020;
  EXPECT_EQ(judged(out, cut, slow_host).status, AttemptStatus::kBlocked);
  slow_host.run_ms = 15000;
  EXPECT_EQ(judged(out, cut, slow_host).status, AttemptStatus::kEscaped);
  RunResult ended_ok = cut;
  ended_ok.outcome = Outcome::kOk;
  EXPECT_EQ(judged(out, ended_ok, prompt).status, AttemptStatus::kEscaped);
  RunResult teardown_failed = cut;
  teardown_failed.outcome = Outcome::kSandboxError;
  EXPECT_EQ(judged(out, teardown_failed, prompt).status, AttemptStatus::kError);
}

// ---- reports ----

AuditReport sample_report() {
  AuditReport r;
  r.binding = {"sha256:h", "namespace", "0.1.0", "sha256:p", "sha256:c"};
  r.host_summary = "Linux";
  r.created_at = "2026-11-29T10:00:00Z";
  r.complete = true;
  AttemptVerdict v;
  v.id = "net-loopback-tcp";
  v.threat_class = "network";
  v.aspect = Aspect::kNetwork;
  v.claimed = Enforcement::kEnforced;
  v.status = AttemptStatus::kBlocked;
  v.evidence = "the host listener got nothing";
  r.verdicts.push_back(v);
  r.interpreters = {{Language::kPython, "Python 3.11.2"}, {Language::kSh, "dash"}};
  return r;
}

TEST(AuditReport, JsonRoundTripAndExitStatus) {
  const AuditReport r = sample_report();
  const Result<AuditReport> back = report_from_json(to_json(r));
  ASSERT_TRUE(back.has_value()) << back.error().describe();
  EXPECT_EQ(back->binding, r.binding);
  EXPECT_EQ(back->interpreters, r.interpreters);
  // A report of the schema before the interpreters were measured is not used.
  nlohmann::json old = to_json(r);
  old["schema"] = 1;
  EXPECT_FALSE(report_from_json(old).has_value());
  ASSERT_EQ(back->verdicts.size(), 1u);
  EXPECT_EQ(back->verdicts[0].status, AttemptStatus::kBlocked);
  EXPECT_EQ(audit_exit_status(r.verdicts), 0);
  std::vector<AttemptVerdict> v = r.verdicts;
  v[0].status = AttemptStatus::kError;
  EXPECT_EQ(audit_exit_status(v), 2);
  v.push_back(r.verdicts[0]);
  v.back().status = AttemptStatus::kEscaped;
  EXPECT_EQ(audit_exit_status(v), 1);
  // An escape where nothing is claimed is information, not a failure.
  v.back().claimed = Enforcement::kNone;
  EXPECT_EQ(audit_exit_status(v), 2);
}

// Found by audit_report_fuzz: an interpreter entry of another type ("language": 5) threw
// out of interpreters_from_json(), which promises to skip what it cannot read, and so
// made report_from_json() refuse the whole report.
TEST(AuditReport, UnreadableInterpreterEntriesAreSkipped) {
  nlohmann::json j = to_json(sample_report());
  j["interpreters"] = nlohmann::json::parse(
      R"([{"language": 5, "version": "x"}, {"language": "sh", "version": []}, "python",
          {"language": "python", "version": "Python 3.11.2"}])");
  const Result<AuditReport> back = report_from_json(j);
  ASSERT_TRUE(back.has_value()) << back.error().describe();
  ASSERT_EQ(back->interpreters.size(), 1u);
  EXPECT_EQ(back->interpreters[0].version, "Python 3.11.2");
}

// Seen while writing audit_report_fuzz: a verdict's duration_ms was read with value(..., 0), an
// int: undefined behaviour for a float out of range. Such a report is refused.
TEST(AuditReport, DurationOutOfRangeIsRefused) {
  nlohmann::json j = to_json(sample_report());
  j["attempts"][0]["duration_ms"] = 1e300;
  EXPECT_FALSE(report_from_json(j).has_value());
  j["attempts"][0]["duration_ms"] = 5000000000LL;  // beyond an int: kept whole
  const auto back = report_from_json(j);
  ASSERT_TRUE(back.has_value()) << back.error().describe();
  EXPECT_EQ(back->verdicts[0].duration_ms, 5000000000LL);
  j["schema"] = 2e300;
  EXPECT_FALSE(report_from_json(j).has_value());
}

// Sessions are backed only by a report whose cross-session attempts are all BLOCKED.
TEST(AuditReport, SessionsAreBackedOnlyWhenEveryCrossSessionAttemptIsBlocked) {
  AuditReport r = sample_report();
  EXPECT_NE(sessions_unbacked(r).find("no cross-session attempt"), std::string::npos);
  AttemptVerdict v;
  v.id = "sess-signal";
  v.threat_class = std::string(kSessionClass);
  v.status = AttemptStatus::kBlocked;
  r.verdicts.push_back(v);
  EXPECT_EQ(sessions_unbacked(r), "");
  for (const AttemptStatus other :
       {AttemptStatus::kEscaped, AttemptStatus::kError, AttemptStatus::kSkipped}) {
    r.verdicts.back().status = other;
    EXPECT_NE(sessions_unbacked(r).find("sess-signal is"), std::string::npos);
  }
}

TEST(AuditReport, StoredReportIsFoundOnlyUnderItsExactBinding) {
  const testing::ScratchDir dir;
  ::setenv("CORDON_AUDIT_DIR", dir.path.c_str(), 1);
  AuditReport r = sample_report();
  ASSERT_TRUE(store_report(r).has_value());
  EXPECT_TRUE(load_report(r.binding).has_value());
  for (auto change :
       {&ReportBinding::host_fingerprint, &ReportBinding::backend_version,
        &ReportBinding::policy_hash, &ReportBinding::catalogue_hash, &ReportBinding::network}) {
    ReportBinding other = r.binding;
    other.*change += "x";
    EXPECT_FALSE(load_report(other).has_value());
  }
  // A partial audit (--only) is never used as proof.
  r.complete = false;
  ASSERT_TRUE(store_report(r).has_value());
  EXPECT_FALSE(load_report(r.binding).has_value());
  ::unsetenv("CORDON_AUDIT_DIR");
}

// The allow-list a report was made under is part of its binding: the same list in another
// order or case binds the same report, another list or other limits another one, and a
// report made without a list stays as it was (no "network" of its own).
TEST(AuditReport, TheAllowListIsPartOfTheBinding) {
  NetworkAccess list;
  list.allow = {"PyPI.org", "*.pythonhosted.org", "10.1.2.3"};
  list.deny = {"upload.pypi.org"};
  NetworkAccess reordered = list;
  reordered.allow = {"10.1.2.3", "*.PythonHosted.org", "pypi.org.", "pypi.org"};
  EXPECT_EQ(network_binding(list), network_binding(reordered));
  EXPECT_EQ(network_binding(list),
            R"({"allow":["*.pythonhosted.org","10.1.2.3","pypi.org"],"deny":["upload.pypi.org"],)"
            R"("max_bytes":null,"max_connections":null})");
  NetworkAccess limited = list;
  limited.max_connections = 5;
  EXPECT_NE(network_binding(list), network_binding(limited));
  NetworkAccess other = list;
  other.allow.push_back("example.org");
  EXPECT_NE(network_binding(list), network_binding(other));
  EXPECT_EQ(network_binding(NetworkAccess{}), "");

  AuditReport r = sample_report();
  EXPECT_TRUE(to_json(r)["network"].is_null());
  r.binding.network = network_binding(limited);
  const Result<AuditReport> back = report_from_json(to_json(r));
  ASSERT_TRUE(back.has_value()) << back.error().describe();
  EXPECT_EQ(back->binding, r.binding);
  EXPECT_EQ(to_json(r)["network"]["max_connections"], 5);
  EXPECT_NE(report_path(r.binding), report_path(sample_report().binding));
}

// A variant's report (issue #18) is its own: bound to "container (runsc)", never to the
// plain container backend's, and kept in a file named without spaces or parentheses.
TEST(AuditReport, AVariantsReportIsKeptApart) {
  AuditReport r = sample_report();
  r.binding.backend_name = "container (runsc)";
  const std::string file = report_path(r.binding).filename().string();
  EXPECT_TRUE(file.starts_with("container-runsc-")) << file;
  EXPECT_EQ(file.find_first_of(" ()"), std::string::npos) << file;
  AuditReport plain = sample_report();
  plain.binding.backend_name = "container";
  EXPECT_NE(report_path(r.binding), report_path(plain.binding));
  EXPECT_TRUE(report_path(plain.binding).filename().string().starts_with("container-"));
}

TEST(AuditReport, HostFingerprintIsStable) {
  EXPECT_EQ(host_fingerprint(), host_fingerprint());
  EXPECT_TRUE(host_fingerprint().starts_with("sha256:"));
}

}  // namespace
}  // namespace cordon::audit
