#include <gtest/gtest.h>
#include <poll.h>

#include <string>

#include "cordon/proc/pipe.h"
#include "cordon/proc/reaper.h"
#include "proc_test_support.h"

namespace cordon::proc {
namespace {

using std::chrono::seconds;
using Clock = ReaperProcess::Clock;

class Reaper : public ::testing::Test {
 protected:
  void SetUp() override {
    auto helper = find_reaper_helper();
    ASSERT_TRUE(helper.has_value()) << "cordon-reaper not built";
    helper_ = *helper;
  }
  SpawnOptions sh(const std::string& script) {
    SpawnOptions opts;
    opts.path = "/bin/sh";
    opts.argv = {"sh", "-c", script};
    opts.env = {"PATH=/usr/bin:/bin"};
    return opts;
  }
  std::string setsid_orphan(const std::string& dir) {
    return "setsid sh -c 'echo $$ > " + dir + "/p.tmp; mv " + dir + "/p.tmp " + dir +
           "/p; exec sleep 30' & while [ ! -s " + dir + "/p ]; do sleep 0.01; done; ";
  }
  std::filesystem::path helper_;
};

TEST_F(Reaper, ReportsExitStatusAndOutput) {
  auto out = make_pipe();
  SpawnOptions code = sh("echo $MARK; exit 3");
  code.env.push_back("MARK=hello");
  code.stdout_fd = out->write.get();
  auto reaper = ReaperProcess::start(helper_, code, Clock::now() + seconds(10));
  ASSERT_TRUE(reaper.has_value()) << reaper.error().describe();
  out->write.reset();
  EXPECT_GT(reaper->code_pid(), 0);
  std::string got;
  char buf[256];
  for (ssize_t n; (n = ::read(out->read.get(), buf, sizeof buf)) > 0;) got.append(buf, n);
  EXPECT_EQ(got, "hello\n");  // EOF came: the helper holds no copy of the code's stdout
  auto report = reaper->finish(Clock::now() + seconds(10));
  ASSERT_TRUE(report.has_value()) << report.error().describe();
  EXPECT_EQ(report->main.exit_code(), 3);
  EXPECT_GT(report->tree_max_rss_kb, 0);
}

TEST_F(Reaper, KillsASetsidOrphanAfterANormalExit) {
  testing::ScratchDir dir;
  auto reaper = ReaperProcess::start(helper_, sh(setsid_orphan(dir.path) + "exit 0"),
                                     Clock::now() + seconds(10));
  ASSERT_TRUE(reaper.has_value()) << reaper.error().describe();
  auto report = reaper->finish(Clock::now() + seconds(10));
  ASSERT_TRUE(report.has_value()) << report.error().describe();
  EXPECT_EQ(report->main.exit_code(), 0);
  const pid_t orphan = std::stoi(testing::read_file(dir.path + "/p").value_or("0"));
  ASSERT_GT(orphan, 0);
  // The helper reaped it (it was its subreaper), so it is gone, not even a zombie.
  EXPECT_TRUE(testing::eventually_dead(orphan, "sleep"));
}

TEST_F(Reaper, KillTreeOnRequest) {
  testing::ScratchDir dir;
  auto reaper = ReaperProcess::start(helper_, sh(setsid_orphan(dir.path) + "sleep 30"),
                                     Clock::now() + seconds(10));
  ASSERT_TRUE(reaper.has_value()) << reaper.error().describe();
  // Wait for the orphan to exist, then ask for the kill.
  const auto until = Clock::now() + seconds(5);
  while (!testing::read_file(dir.path + "/p") && Clock::now() < until) {
    struct pollfd none{-1, 0, 0};
    ::poll(&none, 0, 10);
  }
  reaper->kill_tree();
  auto report = reaper->finish(Clock::now() + seconds(10));
  ASSERT_TRUE(report.has_value()) << report.error().describe();
  EXPECT_EQ(report->main.signal(), SIGKILL);
  const pid_t orphan = std::stoi(testing::read_file(dir.path + "/p").value_or("0"));
  ASSERT_GT(orphan, 0);
  EXPECT_TRUE(testing::eventually_dead(orphan, "sleep"));
}

TEST_F(Reaper, DroppingTheHandleKillsTheTree) {
  testing::ScratchDir dir;
  pid_t orphan = 0;
  {
    auto reaper = ReaperProcess::start(helper_, sh(setsid_orphan(dir.path) + "sleep 30"),
                                       Clock::now() + seconds(10));
    ASSERT_TRUE(reaper.has_value());
    const auto until = Clock::now() + seconds(5);
    while (!testing::read_file(dir.path + "/p") && Clock::now() < until) {
      struct pollfd none{-1, 0, 0};
      ::poll(&none, 0, 10);
    }
    orphan = std::stoi(testing::read_file(dir.path + "/p").value_or("0"));
  }  // control socket EOF: the helper kills everything (as when cordon dies)
  ASSERT_GT(orphan, 0);
  EXPECT_TRUE(testing::eventually_dead(orphan, "sleep"));
}

TEST_F(Reaper, ExecFailureIsReported) {
  SpawnOptions code;
  code.path = "/nonexistent/python3";
  code.argv = {"python3"};
  auto reaper = ReaperProcess::start(helper_, code, Clock::now() + seconds(10));
  ASSERT_FALSE(reaper.has_value());
  EXPECT_EQ(reaper.error().sys_errno, ENOENT);
  EXPECT_NE(reaper.error().message.find("execve /nonexistent/python3"), std::string::npos);
}

}  // namespace
}  // namespace cordon::proc
