// The messages between cordon and its subreaper helper (core/libexec/cordon_reaper.cpp),
// over an AF_UNIX SOCK_SEQPACKET pair: one fixed-size struct per message. Both sides are
// built from this tree at the same time, so the layout needs no versioning.
//
// helper -> cordon: kStarted (pid) or kSpawnFailed (error, stage), then at the end
// kFinished (the main process's wait status and rusage, and the whole tree's CPU time
// and largest RSS, from RUSAGE_CHILDREN after every descendant was reaped).
// cordon -> helper: any byte means "kill the tree now"; EOF (cordon died or gave up)
// means the same.
#pragma once

#include <cstdint>

namespace cordon::proc {

enum class ReaperMessageType : std::uint32_t { kStarted = 1, kSpawnFailed = 2, kFinished = 3 };

struct ReaperMessage {
  ReaperMessageType type = ReaperMessageType::kStarted;
  std::int32_t pid = 0;
  std::int32_t error = 0;        // errno for kSpawnFailed
  std::int32_t stage = 0;        // SpawnStage for kSpawnFailed
  std::int32_t status = 0;       // wait status of the main process (kFinished)
  std::int32_t main_reaped = 0;  // 1 when `status` is real
  std::int64_t main_utime_us = 0;
  std::int64_t main_stime_us = 0;
  std::int64_t main_maxrss_kb = 0;
  std::int64_t tree_cpu_us = 0;     // user + system of every reaped descendant
  std::int64_t tree_maxrss_kb = 0;  // the largest single descendant's peak RSS
};

// argv of the helper: cordon-reaper <parent pid> <path> <rlimit count> {<resource> <soft>
// <hard>}... -- <argv of the code>. Its environment and cwd are the code's; its fds 0/1/2
// are the code's stdio and fd 3 the control socket.
inline constexpr int kReaperControlFd = 3;

}  // namespace cordon::proc
