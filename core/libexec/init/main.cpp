// cordon-init: the one process-tree helper of every backend, in the role its first argument
// names. The first three roles speak one protocol (cordon/proc/init_protocol.h) and end a
// run one way (cordon/proc/init_end.h): start the code from an order, reap, and once the
// code's main process has ended kill and reap every other process of the run, then report.
//   ns         PID 1 of a namespace sandbox (the namespace backend)
//   oci        PID 1 of a container (the container backend, under runc or runsc)
//   reaper     a subreaper for a plain process tree (the subprocess backend without a cgroup)
//   subreaper  the parent of an attached OCI runtime (runsc), reaping what its tree orphans
//              (the same end: init_end.h), with no protocol: its exit is the runtime's
// Static: a container's root may have no loader, and the sandbox execs it in a fresh root.
//
// Each role names itself after its job (PR_SET_NAME) before anything else, so `ps`, the
// tests and an operator still tell a sandbox's init from a container's or a reaper.
#include <sys/prctl.h>
#include <unistd.h>

#include <cstring>

#include "roles.h"

int main(int argc, char** argv) {
  const char* role = argc > 1 ? argv[1] : "";
  if (std::strcmp(role, "ns") == 0) {
    ::prctl(PR_SET_NAME, "cordon-ns-init");
    return cordon::init::ns_init_main();
  }
  if (std::strcmp(role, "oci") == 0) {
    ::prctl(PR_SET_NAME, "cordon-oci-init");
    return cordon::init::oci_init_main(argc - 1, argv + 1);
  }
  if (std::strcmp(role, "reaper") == 0) {
    ::prctl(PR_SET_NAME, "cordon-reaper");
    return cordon::init::reaper_main(argc - 1, argv + 1);
  }
  if (std::strcmp(role, "subreaper") == 0) {
    ::prctl(PR_SET_NAME, "cordon-subreap");
    return cordon::init::subreaper_main(argc - 1, argv + 1);
  }
  static const char msg[] =
      "cordon-init: internal helper of cordon (roles: ns, oci, reaper, subreaper); not meant to "
      "be run by hand\n";
  (void)::write(2, msg, sizeof(msg) - 1);
  return 2;
}
