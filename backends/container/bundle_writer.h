// The apply step of a bundle plan: writes config.json and the root directory's files
// under the bundle directory, and mounts the run's scratch tmpfs (bound at /tmp inside).
// Everything it makes is removed by remove_container_leftovers (instance.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "container_plan.h"
#include "cordon/error.h"

namespace cordon::oci {

// Creates `bundle` (0700) with config.json, rootfs/ populated from plan.rootfs_prep, and
// scratch/ with a tmpfs of `scratch_bytes` (mode 1777) mounted on it.
[[nodiscard]] Status write_bundle(const std::filesystem::path& bundle, const BundlePlan& plan,
                                  std::uint64_t scratch_bytes);

// Writes the code file into the bundle's root directory (read-only inside the container),
// and the input files into the scratch directory, owned by the sandbox user.
[[nodiscard]] Status place_run_files(const std::filesystem::path& bundle, const RunPayload& payload,
                                     const std::map<std::string, std::string>& input_files,
                                     bool host_rootfs);

}  // namespace cordon::oci
