// The cold `runc run` baseline of the container benchmarks: the backend's own bundle plan
// (same mounts, namespaces, resources, seccomp section) with the code as the container's
// process instead of cordon's init, written where `runc run --bundle` can take it.
#pragma once

#include <string>
#include <vector>

namespace cordon::bench {

// Writes a bundle for the default limits under `dir` with `argv` as the container's process
// (`init` is cordon-oci-init's host path, which the plan binds); returns the bundle's path.
// Exits the benchmark on failure: a broken baseline must not read as fast.
[[nodiscard]] std::string write_runc_bundle(const std::string& dir,
                                            const std::vector<std::string>& argv,
                                            const std::string& init);

// Unmounts the scratch tmpfs write_runc_bundle mounted under `dir`, so that the directory
// can be removed (a mount point is not removable: the bench's temporary directory stayed).
void release_runc_bundle(const std::string& dir);

}  // namespace cordon::bench
