// The figures of a run (RunResult's cpu_ms, max_rss_kb, memory_peak_kb, signal), checked the
// same way for every backend: what was not measured is unset, never 0; what was is real.
#pragma once

#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <string>

#include "cordon/result.h"

namespace cordon_test {

// A run cordon stopped (deadline, cancel) was killed with SIGKILL, by cordon: that is its
// signal whatever the backend saw. No figure is 0: a run that started uses memory, and a
// spinning one CPU time, so a 0 can only be "not measured" written as a number.
inline void expect_stopped_by_cordon(const cordon::RunResult& r) {
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_NE(r.cpu_ms, 0) << "a spinning run's CPU time, if measured";
  EXPECT_NE(r.max_rss_kb, 0) << "the peak of a process that ran, if measured";
  EXPECT_NE(r.memory_peak_kb, 0) << "the peak of a sandbox that ran, if measured";
}

// Spins until the deadline (the timed-out case above).
inline constexpr const char* kSpinSh = "while :; do :; done";

// Python that holds 50 MiB of its own pages, then prints its resident file-backed pages
// (RssFile, KiB): the interpreter and its libraries, shared with the host's page cache
// (0 where the kernel does not say: gVisor's status has no RssFile; its rss is its own).
inline constexpr const char* kFiftyMibPython =
    "b = bytearray(50 << 20)\n"
    "for i in range(0, len(b), 4096):\n"
    "    b[i] = 1\n"
    "status = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
    "print(int(status.get('RssFile', '0 kB').split()[0]))\n";

// The two memory figures of a kFiftyMibPython run in a sandbox with a memory cgroup. Both
// hold the 50 MiB. The process's resident set also counts the shared file pages, which are
// charged to whoever first read them (the host), not to the sandbox; every other page of
// the process is charged to the sandbox, so the sandbox's peak covers the process's peak
// but for those.
inline void expect_memory_figures_of_fifty_mib(const cordon::RunResult& r) {
  ASSERT_EQ(r.outcome, cordon::Outcome::kOk) << r.stderr_data << r.error.value_or("");
  ASSERT_TRUE(r.max_rss_kb.has_value());
  ASSERT_TRUE(r.memory_peak_kb.has_value());
  const std::int64_t file_kb = std::stoll(r.stdout_data);
  constexpr std::int64_t kFiftyMibKb = 50 * 1024;
  EXPECT_GE(*r.max_rss_kb, kFiftyMibKb);
  EXPECT_GE(*r.memory_peak_kb, kFiftyMibKb);
  EXPECT_GE(*r.memory_peak_kb, *r.max_rss_kb - file_kb)
      << "max_rss_kb " << *r.max_rss_kb << ", of which shared file pages " << file_kb;
  // Not the whole interpreter again: the figures are of one run.
  EXPECT_LT(*r.memory_peak_kb, *r.max_rss_kb + 32 * 1024);
}

}  // namespace cordon_test
