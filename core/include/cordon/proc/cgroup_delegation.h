// Where cordon may make cgroup v2 groups that carry controllers (memory.max, pids.max,
// cpu.max): the one place that decides it, for every backend.
//
// cgroup v2 hands a controller to child groups only from a group without processes of its
// own (the "no internal process" rule; the root is exempt). cordon's own group holds cordon,
// so on a pure v2 host it can give its run groups no controller unless it first gets a group
// of its own to manage:
//  - the hierarchy's root (a bare v2 host, cordon started from its init): use it as it is;
//  - a systemd host (the common case): the manager owns the tree and another writer must only
//    touch a subtree delegated to it. cordon asks systemd over D-Bus (the system bus as
//    root, the user's bus otherwise) for a transient scope `cordon-<pid>.scope` with
//    Delegate=yes holding cordon itself, as podman and crun do; a group systemd already
//    delegated to us (its trusted.delegate / user.delegate xattr) is used in place;
//  - v2 without systemd: nobody else manages the tree, so, as docker-in-docker does, the
//    processes of our own group move into a leaf and our group becomes the parent.
// In the two last cases cordon itself then lives in the leaf `cordon-<pid>-0` below the
// parent (the counter of next_owned_name starts at 1, so no run group takes that name, and a
// dead cordon's leaf is swept like its run groups). An OCI runtime started by cordon resolves
// a relative cgroupsPath against the parent of its own v2 group (runc's rule), which is then
// exactly this parent.
//
// Only the real hierarchy (/sys/fs/cgroup) is ever rearranged; a test's fake cgroup root gets
// the prediction and nothing moves. On a hybrid host (this machine kind) the v2 tree has no
// controllers, so nothing here applies and groups go below our own cgroup as before.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/error.h"
#include "cordon/proc/cgroup_layout.h"

namespace cordon::proc {

// The facts of our own v2 group that decide the route (read by read_v2_facts()).
struct V2Facts {
  bool offers_controllers = false;   // our cgroup.controllers is not empty (not a hybrid
                                     // host's controller-less tree)
  bool own_is_root = false;          // the hierarchy's root: exempt from the rule
  bool own_holds_processes = false;  // cgroup.procs is not empty
  bool delegated_to_us = false;      // systemd's trusted.delegate / user.delegate xattr is set
  bool systemd = false;              // /run/systemd/system exists: the manager owns the tree
  bool in_cordon_leaf = false;       // our group is a live cordon's leaf "cordon-<pid>-0"
};

enum class V2Route {
  kOwnGroup,      // make groups below our own cgroup as it is
  kLeaf,          // move our group's processes into a leaf, then make groups beside it
  kSystemdScope,  // ask systemd for a delegated scope holding us, then as kLeaf inside it
  kSiblingLeaf,   // we start in another cordon's leaf (it started us): a leaf of our own
                  // beside it, the same parent
};

// Pure: the route for these facts.
[[nodiscard]] V2Route choose_v2_route(const V2Facts& facts);

// Reads the facts of `own_dir` (a v2 group) on this host.
[[nodiscard]] V2Facts read_v2_facts(const std::filesystem::path& own_dir);

// The parent of cordon's v2 groups with controllers, and how it was had.
struct V2Parent {
  std::filesystem::path dir;  // empty in a prediction of a scope not made yet
  std::string via;            // "" for our own group as it is; otherwise, in words, for claims
};

// acquire=false: predicts the parent without changing anything (for probes, capabilities,
// `cordon plan`), failing with the reason when no route exists. acquire=true: makes the
// route real, once per process (later calls return the same parent), then returns it.
// `v2` is the v2 entry of discover_cgroup_hierarchies(cgroup_root).
[[nodiscard]] Result<V2Parent> v2_group_parent(const CgroupHierarchy& v2,
                                               const std::filesystem::path& cgroup_root,
                                               bool acquire);

// The parent acquired by this process, if any (after v2_group_parent(..., true)).
[[nodiscard]] std::optional<V2Parent> acquired_v2_parent();

// Where cordon's groups of hierarchy `h` go: on v2 the acquired parent once there is one,
// otherwise (and on v1) our own cgroup in `h`.
[[nodiscard]] std::filesystem::path group_parent_dir(const CgroupHierarchy& h);

// Enables `controller` ("memory", "pids", "cpu") for the child groups of the v2 group
// `parent` (+controller in its cgroup.subtree_control), unless it is enabled already.
[[nodiscard]] Status enable_v2_controller(const std::filesystem::path& parent,
                                          std::string_view controller);

// Moves every process of the v2 group `group` into its child `leaf` (made if missing), round
// after round until `group` holds none (a process forked meanwhile is born in `group`).
[[nodiscard]] Status move_group_into_leaf(const std::filesystem::path& group,
                                          const std::filesystem::path& leaf);

// The pid in a scope name made here ("cordon-123.scope" -> 123).
[[nodiscard]] std::optional<pid_t> scope_owner_pid(std::string_view name);

// Kills what still runs in the scopes of dead cordons in `slice_dir` (their run groups;
// systemd collects a scope once it is empty) and removes their groups. Returns how many
// scopes were swept.
[[nodiscard]] Result<int> sweep_dead_scopes(const std::filesystem::path& slice_dir);

}  // namespace cordon::proc
