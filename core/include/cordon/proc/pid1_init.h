// cordon as PID 1 of its PID namespace (a container's entry point, `unshare --pid --fork
// cordon ...`): every orphan of the namespace is reparented to PID 1, and one that nobody
// reaps stays a zombie holding its pid for as long as the namespace lives (a runtime's
// detached container init, whatever a helper left). cordon itself never reaps children it
// does not know: a reap by waitid(P_ALL) would steal the status of a child some thread waits
// for by pid or pidfd (spawn.h's ChildProcess, a runtime's call, an embedder's own). So a
// cordon that is PID 1 splits in two first, as tini does: PID 1 does nothing but reap
// whatever is reparented to it and pass termination signals on, and cordon runs in its child.
#pragma once

namespace cordon::proc {

// When this process is PID 1, forks: the parent stays PID 1, reaps every process that ends
// as its child, forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to its child,
// and exits with the child's status once the child ended (a signal n as 128 + n). Returns in
// the child, or at once when this process is not PID 1. Call it first thing in main, before
// any thread is started.
void reap_orphans_if_pid1();

}  // namespace cordon::proc
