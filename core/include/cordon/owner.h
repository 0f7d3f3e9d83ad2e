// Names that record which cordon process owns a host object ("cordon-run-<pid>-…",
// "cordon-<pid>-<n>"), so a later start can sweep what a killed cordon left behind
// without ever touching the objects of a cordon that is still running.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace cordon {

// Alive means the process exists and is not a zombie: on hosts whose PID 1 does not
// reap, a dead cordon can stay a zombie forever, and what it owned is stale all the same.
// A recycled pid reads as alive, which only delays a sweep.
//
// Run cgroups are not judged by this: their owner holds a lock on each (cgroup2.h,
// sweep_unowned_cgroups). For the rest (run dirs):
// the pid in a name is read in the sweeping process's PID namespace, so the rule holds only
// between cordons that share one. A cordon in another PID namespace that shares the same
// run-directory parent or cgroup tree (a container given the host's /dev/shm, or run with
// the host's cgroup namespace and the same cgroup) reads as dead while it runs — or as an
// unrelated live process — and a sweep can then remove the objects of a live run. Give
// cordons in different PID namespaces different $CORDON_RUN_DIR and cgroups.
[[nodiscard]] bool pid_alive(pid_t pid);

// "<prefix><our pid>-".
[[nodiscard]] std::string owned_prefix(std::string_view prefix);
// "<prefix><our pid>-<n>", n from one counter for the whole process: names made through
// it never repeat within a process, whichever module asks (the run cgroups of Cgroup2
// and of LimitGroup share a directory on a cgroup v2 host).
[[nodiscard]] std::string next_owned_name(std::string_view prefix);
// The pid in "<prefix><pid>-<rest>", or nullopt when `name` is not of that form.
[[nodiscard]] std::optional<pid_t> owner_pid(std::string_view name, std::string_view prefix);

}  // namespace cordon
