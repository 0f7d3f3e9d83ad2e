// A struct timeval from getrusage/wait4 (ru_utime, ru_stime) in microseconds, as the PID-1
// helpers report CPU time (cordon-ns-init, cordon-oci-init, cordon-reaper). Header-only:
// the static helpers use it without linking libcordon-core.
#pragma once

#include <sys/time.h>

#include <cstdint>

namespace cordon::proc {

[[nodiscard]] constexpr std::int64_t usec(const struct timeval& tv) {
  return static_cast<std::int64_t>(tv.tv_sec) * 1000000 + tv.tv_usec;
}

}  // namespace cordon::proc
