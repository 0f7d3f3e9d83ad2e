// How every helper of init_protocol.h ends a run, written once: once the code's main
// process has ended (or cordon asked to stop), every other process of the run is killed
// and reaped, and only then is the report complete. So a report always means "nothing of
// the code is left": cordon reads the figures, the cgroup and the artifacts with no orphan
// still running or writing, whichever helper ran the code. (The helpers once differed:
// one killed the leftovers before reporting, another after.)
//
// Header-only, like init_protocol.h: the helpers are small static binaries.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "cordon/proc/init_protocol.h"
#include "cordon/proc/rusage_usec.h"

namespace cordon::init {

// The main process's end, into the report.
inline void take_main_end(Report& report, int status, const struct rusage& ru) {
  report.main_reaped = 1;
  report.status = status;
  report.main_utime_us = proc::usec(ru.ru_utime);
  report.main_stime_us = proc::usec(ru.ru_stime);
  report.main_maxrss_kb = ru.ru_maxrss;
}

// Kills and reaps every process of the run but the caller, then completes `report`: the
// main process's end when it is reaped here (cordon asked to stop first), the CPU time
// and largest RSS of everything reaped, everything_reaped, the magic.
//
// `kill_all()` sends SIGKILL to every process of the run. `atomic`: one call reaches every
// process, a fork racing it included (kill(-1) from PID 1: the kernel fails a fork once a
// fatal signal is pending), so waiting blocks until a killed process is gone. Otherwise (a
// walk of /proc) a process born after the walk is ours once its parent is reaped and is
// not yet killed: reaping never blocks, and the walk repeats until no child is left.
// With no child left there is no descendant: its topmost ancestor below us would be one.
template <class KillAll>
void end_run(Report& report, pid_t main_pid, KillAll kill_all, bool atomic) {
  for (;;) {
    kill_all();
    bool reaped = false;
    for (;;) {
      int status = 0;
      struct rusage ru{};
      const pid_t got = ::wait4(-1, &status, __WALL | (reaped || !atomic ? WNOHANG : 0), &ru);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        if (errno != ECHILD) return;  // cannot happen; the report stays incomplete
        report.everything_reaped = 1;
        struct rusage all{};
        ::getrusage(RUSAGE_CHILDREN, &all);
        report.tree_cpu_us = proc::usec(all.ru_utime) + proc::usec(all.ru_stime);
        report.tree_maxrss_kb = all.ru_maxrss;
        report.magic = kReportMagic;
        return;
      }
      if (got == 0) break;
      reaped = true;
      if (got == main_pid && report.main_reaped == 0) take_main_end(report, status, ru);
    }
    // Killed processes take a moment to die (only a non-atomic kill gets here idle).
    if (!reaped) ::usleep(1000);
  }
}

}  // namespace cordon::init
