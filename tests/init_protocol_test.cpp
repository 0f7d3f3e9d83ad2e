// The one protocol of cordon's process-tree helpers (cordon/proc/init_protocol.h) and the
// one way they end a run (cordon/proc/init_end.h).
#include "cordon/proc/init_protocol.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "cordon/proc/init_end.h"

namespace cordon::init {
namespace {

std::string run_order() {
  std::string out;
  add_string(out, OrderTag::kExe, "/usr/bin/sh");
  add_string(out, OrderTag::kArg, "sh");
  add_string(out, OrderTag::kArg, "-c");
  add_string(out, OrderTag::kArg, "echo hi");
  add_string(out, OrderTag::kEnv, "PATH=/usr/bin");
  add_string(out, OrderTag::kCwd, "/tmp");
  add_record(out, OrderTag::kFile, 0644, "/tmp/in", "data", /*nul_between=*/true);
  const std::uint64_t lim[2] = {64, 64};
  add_record(out, OrderTag::kRlimit, 7, std::string_view(reinterpret_cast<const char*>(lim), 16));
  const std::int64_t backstop = 7000;
  add_record(out, OrderTag::kBackstop, 0,
             std::string_view(reinterpret_cast<const char*>(&backstop), sizeof(backstop)));
  return out;
}

int check(const std::string& records, OrderKind kind) {
  return check_order(records.data(), static_cast<std::uint32_t>(records.size()), kind);
}

TEST(InitProtocol, WhatTheWritersMakeIsAcceptedForItsKindOnly) {
  const std::string run = run_order();
  EXPECT_EQ(check(run, OrderKind::kRun), 0);
  EXPECT_EQ(check(run, OrderKind::kPrestart), 0);
  EXPECT_EQ(check(run, OrderKind::kRunPrestarted), EPROTO) << "a command where only code goes";
  std::string code;
  add_record(code, OrderTag::kCode, 0, "print(1)\n");
  EXPECT_EQ(check(code, OrderKind::kRunPrestarted), 0);
  EXPECT_EQ(check(code, OrderKind::kRun), EPROTO) << "no command";
  // Walking it gives back what was written, and ends exactly at its size.
  std::uint32_t offset = 0;
  std::vector<std::string> args;
  while (const OrderRecord* r = next_record(run.data(), run.size(), &offset)) {
    if (r->tag == OrderTag::kArg) args.emplace_back(record_data(r));
  }
  EXPECT_EQ(offset, run.size());
  EXPECT_EQ(args, (std::vector<std::string>{"sh", "-c", "echo hi"}));
}

TEST(InitProtocol, MalformedOrdersAreRefusedBeforeAnyRecordIsUsed) {
  const std::string run = run_order();
  // Cut anywhere but between records: a record that no longer fits, or a size not of
  // whole records. (Cut between records, it is a shorter order, valid once it has its
  // command.)
  std::set<std::size_t> boundaries;
  std::uint32_t offset = 0;
  while (next_record(run.data(), run.size(), &offset) != nullptr) boundaries.insert(offset);
  ASSERT_EQ(boundaries.size(), 9U);
  for (std::size_t cut = 1; cut < run.size(); ++cut) {
    if (boundaries.contains(cut)) continue;
    EXPECT_EQ(check(run.substr(0, cut), OrderKind::kRun), EPROTO) << cut;
  }
  EXPECT_EQ(check(run.substr(0, *boundaries.begin()), OrderKind::kRun), EPROTO) << "no argv";
  auto with = [&](OrderTag tag, std::string_view data, std::uint32_t aux = 0) {
    std::string out = run;
    add_record(out, tag, aux, data);
    return check(out, OrderKind::kRun);
  };
  EXPECT_EQ(with(OrderTag::kArg, "unterminated"), EPROTO);
  EXPECT_EQ(with(OrderTag::kEnv, std::string_view("", 0)), EPROTO);
  EXPECT_EQ(with(OrderTag::kFile, std::string_view("no-nul-after-the-path")), EPROTO);
  EXPECT_EQ(with(OrderTag::kFile, std::string_view("\0data", 5)), EPROTO) << "no path";
  EXPECT_EQ(with(OrderTag::kRlimit, "12345678"), EPROTO);
  EXPECT_EQ(with(OrderTag::kBackstop, "1234"), EPROTO);
  EXPECT_EQ(with(static_cast<OrderTag>(99), "x"), EPROTO);
  EXPECT_EQ(with(OrderTag::kExe, std::string_view("/bin/sh\0", 8)), EPROTO) << "two commands";
  // The relay: a port and a path, at most one.
  EXPECT_EQ(with(OrderTag::kRelay, std::string_view("/run/proxy.sock\0", 16), 3128), 0);
  EXPECT_EQ(with(OrderTag::kRelay, std::string_view("/run/proxy.sock\0", 16), 0), EPROTO)
      << "no port";
  EXPECT_EQ(with(OrderTag::kRelay, std::string_view("/run/proxy.sock\0", 16), 70000), EPROTO)
      << "no such port";
  EXPECT_EQ(with(OrderTag::kRelay, "/run/proxy.sock", 3128), EPROTO) << "unterminated";
  EXPECT_EQ(with(OrderTag::kRelay, std::string_view("\0", 1), 3128), EPROTO) << "no path";
  {
    std::string two = run;
    add_string(two, OrderTag::kRelay, "/a", 3128);
    add_string(two, OrderTag::kRelay, "/b", 3129);
    EXPECT_EQ(check(two, OrderKind::kRun), EPROTO) << "two relays";
  }
  // A record whose length runs past the end.
  std::string lying = run;
  OrderRecord r;
  r.tag = OrderTag::kArg;
  r.len = 1U << 30;
  lying.append(reinterpret_cast<const char*>(&r), sizeof(r));
  lying.resize((lying.size() + 7) & ~std::size_t{7}, '\0');
  EXPECT_EQ(check(lying, OrderKind::kRun), EPROTO);
}

// end_run, in a child of the test that is a subreaper as cordon-reaper is: the main
// process exits 3 leaving a setsid'd sleeper behind, reparented to the child. The report
// is complete only once the sleeper is dead and reaped, and carries the main process's
// end; a non-atomic kill (one pid at a time, as a walk of /proc does) is repeated until
// no child is left, and one that misses a process at first still ends it.
TEST(InitEnd, TheReportIsCompleteOnlyOnceEveryOtherProcessIsReaped) {
  int report_pipe[2];
  int pid_pipe[2];
  ASSERT_EQ(::pipe(report_pipe), 0);
  ASSERT_EQ(::pipe(pid_pipe), 0);
  const pid_t helper = ::fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    const pid_t main_pid = ::fork();
    if (main_pid == 0) {
      if (::fork() == 0) {
        ::setsid();
        const pid_t self = ::getpid();
        (void)::write(pid_pipe[1], &self, sizeof(self));
        ::execl("/bin/sleep", "sleep", "100", static_cast<char*>(nullptr));
        ::_exit(127);
      }
      ::_exit(3);
    }
    pid_t sleeper = 0;
    if (::read(pid_pipe[0], &sleeper, sizeof(sleeper)) != sizeof(sleeper)) ::_exit(1);
    int calls = 0;
    Report report;
    // The first call misses the sleeper, as a walk that ran before it was reparented would.
    end_run(
        report, main_pid,
        [&] {
          if (calls++ > 0) ::kill(sleeper, SIGKILL);
        },
        /*atomic=*/false);
    (void)::write(report_pipe[1], &report, sizeof(report));
    (void)::write(report_pipe[1], &sleeper, sizeof(sleeper));
    ::_exit(::kill(sleeper, 0) == 0 ? 1 : 0);  // the sleeper must be gone
  }
  ::close(report_pipe[1]);
  Report report;
  pid_t sleeper = 0;
  ASSERT_EQ(::read(report_pipe[0], &report, sizeof(report)), static_cast<ssize_t>(sizeof(report)));
  ASSERT_EQ(::read(report_pipe[0], &sleeper, sizeof(sleeper)),
            static_cast<ssize_t>(sizeof(sleeper)));
  int status = 0;
  ASSERT_EQ(::waitpid(helper, &status, 0), helper);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the sleeper outlived the report";
  EXPECT_TRUE(is_complete(report));
  EXPECT_EQ(report.main_reaped, 1);
  EXPECT_TRUE(WIFEXITED(report.status) && WEXITSTATUS(report.status) == 3) << report.status;
  EXPECT_GT(sleeper, 0);
  for (const int fd : {report_pipe[0], pid_pipe[0], pid_pipe[1]}) ::close(fd);
}

}  // namespace
}  // namespace cordon::init
