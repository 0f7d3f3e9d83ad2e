// How cordon and cordon-ns-init (the sandbox's PID 1) talk: cordon/proc/init_protocol.h,
// the protocol of every process-tree helper, over this init's channels (below).
//
// The set-up process execs cordon-ns-init once the sandbox is built (namespaces, root
// filesystem, limit groups), before any code exists. The init then:
//   1. sends kReady on the control socket (fd 4, SOCK_SEQPACKET);
//   2. waits for one order: an OrderHeader with SCM_RIGHTS fds {stdin, stdout, stderr}
//      and the code's records (OrderRecord …) in the same message, or, for an order
//      too large for that, fds {order memfd, stdin, stdout, stderr} and the records in
//      the memfd;
//   3. writes the order's files and starts the code (fork: setsid, stdio, cwd, rlimits,
//      exec; the set-up process installed no_new_privs and the seccomp filter before it
//      exec'd the init, so the init and everything it starts run under them); on a
//      failure it sends kFailed with the stage and exits. Success is not reported:
//      cordon goes on to wait for the code's end at once, and reads a kFailed after;
//   4. reaps until the code's main process ends, then kills and reaps every other
//      process of the namespace (init_end.h), writes the Report to fd 3 and waits to be killed
//      (its exit, the namespaces' teardown, is cordon's to time: SandboxProcess::finish).
// Because the sandbox waits at step 2 with nothing of the code in it, a sandbox can be
// built ahead of its run (NamespaceOptions::pool_size): the run then pays only for step 3.
//
// A pooled sandbox may also hold its interpreter started ahead (NamespaceOptions::
// prestart_python): its first order is then a kPrestart one, which the init starts at
// once as in step 3 (the command line is the loader of prestart_loader.h, its stdio the
// pipes the run will read), with the read end of a code pipe as its fd 3 (kPrestartCodeFd)
// and the write end of a ready pipe as its fd 4 (kPrestartReadyFd); once the interpreter
// has started up and says so on fd 4 (a shell: with a library preloaded from fd 5 that
// does this before the shell's main(), kPrestartPreloadFd), the init sends kReady again and waits
// for the second order, a kRunPrestarted one: it writes that order's files, writes the kCode
// record's bytes into the code pipe and closes it, and goes on at step 4 with the interpreter as
// the code's main process. If the interpreter dies while it waits, the init exits (the
// sandbox is then gone, as if it had been killed). One run per sandbox all the same.
//
// A session's sandbox (issue #41) serves many runs: its first order is a kSessionRun (a
// kRun's records), which puts the init in session mode. It keeps the control socket; while
// a run goes on, a kEndRun message (an OrderHeader alone: size 0, no fds) ends the run as
// if its main process had ended (step 4, the main process then killed by SIGKILL), EOF
// makes the init exit (the namespace dies with it), and any other message is ignored.
// After each report it waits for the next kSessionRun order in the same buffer (a kEndRun
// that crossed the run's own end is skipped). An order it cannot start still fails as in
// step 3: the init exits, and the session with it.
#pragma once

#include <cstdint>

#include "cordon/proc/init_protocol.h"

namespace cordon::ns {

inline constexpr int kInitReportFd = 3;
inline constexpr int kInitControlFd = 4;
// In a prestarted interpreter: where its loader reads the code (until EOF), and where it
// writes one byte once its start-up is done and it waits for the code.
inline constexpr int kPrestartCodeFd = 3;
inline constexpr int kPrestartReadyFd = 4;
// In a prestarted shell (NamespaceOptions::prestart_sh): the library it preloads
// (LD_PRELOAD=/proc/self/fd/5), which takes the code from fd 3 before the shell's main()
// (backends/namespace/preload/sh_preload.cpp). It comes with the kPrestart order as the fd a
// run's order uses for its relay directory (a kPrestart order has no relay).
inline constexpr int kPrestartPreloadFd = 5;

// Which step of the code's start failed (set-up steps of the sandbox itself are
// child_setup.h's ChildStage; the numbers do not overlap).
enum class CodeStage : std::int32_t {
  kOrder = 100,  // reading the order
  kWriteFile,    // an input file
  kStartCode,    // fork
  kSession,      // setsid
  kFds,          // stdio
  kChdir,
  kRlimit,
  kExecCode,
  kRelay,  // the order's network relay (init_protocol.h's kRelay) could not listen
};

// The set-up process and then the init -> cordon, on the control socket (the set-up
// channel before the exec of init): cordon/proc/init_protocol.h's events. kTmpFd carries
// the sandbox's /tmp as an SCM_RIGHTS fd (for artifacts); kFailed the stage (child_setup.h's
// ChildStage or CodeStage), the errno and, for a mount or a file, its index.
//
// cordon -> init, on the control socket: an OrderHeader (init_protocol.h) with the fds.
// Its `size` bytes of records follow the header in the same message when they fit in
// kInlineOrderMaxBytes (a run's usual order: a few hundred bytes), else they are in a
// memfd, from offset 0, passed first. Inline saves the run's path a memfd on cordon's
// side and an fstat, a mapping and its page fault in the init; the memfd keeps large
// input files out of the init's memory (they would be charged to the sandbox's limit).
// The init tells the two apart by the message's length: a header alone, or header and
// records.
inline constexpr std::uint32_t kInlineOrderMaxBytes = 8192;
inline constexpr int kOrderFdCount = 4;  // memfd, stdin, stdout, stderr
// ... and the directory of the egress proxy's socket, for an order with a kRelay record
// whose path is a name in it (the sandbox was built before that socket existed).
inline constexpr int kOrderFdCountWithRelayDir = 5;
using init::OrderHeader;
using init::OrderKind;
using init::OrderRecord;
using init::OrderTag;

}  // namespace cordon::ns
