// The roles of cordon-init, the one process-tree helper (cordon/proc/init_protocol.h).
#pragma once

namespace cordon::init {

// PID 1 of a namespace sandbox (cordon/proc/ns_init_channel.h): exec'd by the sandbox's
// set-up process under the sandbox's seccomp filter, with an empty environment.
int ns_init_main();

// PID 1 of a container (cordon/proc/oci_init_channel.h): the OCI runtime's process.
// `argv[0]` is the role's name; `--connect PATH` names cordon's socket to connect to
// (without it, fd 3 is already the channel).
int oci_init_main(int argc, char** argv);

// The subprocess backend's fallback subreaper (cordon/proc/reaper_protocol.h). `argv[0]` is
// the role's name, the role's arguments follow.
int reaper_main(int argc, char** argv);

// The parent of an OCI runtime cordon starts and waits for (gVisor's `runsc run`, attached):
// a subreaper, so the processes the runtime's tree orphans (gVisor's stubs, reparented to
// PID 1 when its sandbox ends: zombies for good under a PID 1 that does not reap) come to
// it; when the runtime ended it kills and reaps everything left below it, then exits with
// the runtime's status. cordon itself never becomes a subreaper (cordon/proc/reaper.h):
// as a library in a server or a GUI, it would take (and have to reap) the orphans of the
// process's other children, and a reap of any child steals a status someone waits for.
// `argv`: subreaper -- <runtime argv...>.
int subreaper_main(int argc, char** argv);

}  // namespace cordon::init
