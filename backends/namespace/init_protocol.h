// What cordon-ns-init (the sandbox's PID 1) reports to cordon when the code's main
// process ends: one fixed-size message on fd 3, a pipe whose read end cordon holds.
// Shared by ns_init.cpp and the backend; both are built in-tree with the same compiler.
#pragma once

#include <cstdint>

namespace cordon::ns {

inline constexpr int kInitReportFd = 3;

struct InitReport {
  std::int32_t magic = 0;   // kInitReportMagic once filled in
  std::int32_t status = 0;  // the main process's wait status
  std::int64_t utime_us = 0;
  std::int64_t stime_us = 0;
  std::int64_t maxrss_kb = 0;
  std::int64_t children_cpu_us = 0;  // everything init reaped, the main process included
};

inline constexpr std::int32_t kInitReportMagic = 0x636f7264;  // "cord"

}  // namespace cordon::ns
