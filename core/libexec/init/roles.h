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

}  // namespace cordon::init
