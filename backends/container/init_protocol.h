// What cordon says to cordon-oci-init (PID 1 inside each container) and what it answers,
// over one AF_UNIX stream socket that the runtime passes to the container as fd 3
// (`--preserve-fds 1`). Shared by oci_init.cpp and the backend; both are built in-tree
// with the same compiler, so the layout needs no versioning beyond the magic.
//
// cordon -> init: an InitRequest header, then `strings_bytes` bytes of NUL-terminated
//   strings: argc argv strings, then envc "NAME=value" strings. Later, any byte means
//   "stop now"; EOF (cordon died or gave up) means the same.
// init -> cordon: one InitReport when the code's main process has ended and the init has
//   killed and reaped every other process of the container (everything_reaped says so;
//   cordon refuses a report without it, init_report.h).
//
// The request arrives after the container started, so a container created ahead of time
// (the warm pool) does not know its code until a run takes it.
#pragma once

#include <cstdint>

namespace cordon::oci {

inline constexpr int kInitControlFd = 3;
inline constexpr std::int32_t kInitMagic = 0x636f6369;  // "coci"
// Bounds the init applies to what it reads (the code itself travels in argv or a file).
inline constexpr std::uint32_t kInitMaxStrings = 4096;
inline constexpr std::uint32_t kInitMaxBytes = 8u << 20;

struct InitRequest {
  std::int32_t magic = kInitMagic;
  std::uint32_t argc = 0;
  std::uint32_t envc = 0;
  std::uint32_t strings_bytes = 0;
  // The init's own backstop: it kills the container this long after the code started,
  // even if cordon is gone (cordon enforces the real deadline from outside, earlier).
  std::int64_t backstop_ms = 0;
};

struct InitReport {
  std::int32_t magic = 0;       // kInitMagic once filled in
  std::int32_t status = 0;      // the main process's wait status
  std::int32_t exec_errno = 0;  // set when the code could not be started at all
  // 1: every other process of the container was killed and reaped before this report,
  // so nothing of the code runs while cordon reads the figures and the artifacts.
  std::int32_t everything_reaped = 0;
  std::int64_t utime_us = 0;
  std::int64_t stime_us = 0;
  std::int64_t maxrss_kb = 0;
  std::int64_t children_cpu_us = 0;  // everything init reaped, the main process included
};

}  // namespace cordon::oci
