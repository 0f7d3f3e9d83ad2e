// The apply step of a bundle plan: the instance's shared root directory (once), and per
// container config.json, the code directory and the run's scratch tmpfs (bound at /tmp).
// Everything it makes is removed by remove_container_leftovers (instance.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "container_plan.h"
#include "cordon/error.h"

namespace cordon::oci {

// Creates the shared root directory `root` (0755) from plan.rootfs_prep; once per
// backend instance.
[[nodiscard]] Status write_shared_rootfs(const std::filesystem::path& root, const BundlePlan& plan);

// Creates `bundle` (0700) with config.json, code/ (bound read-only at kCodeDir) and
// scratch/ with a tmpfs of `scratch_bytes` (mode 1777) mounted on it.
[[nodiscard]] Status write_bundle(const std::filesystem::path& bundle, std::string_view config_json,
                                  std::uint64_t scratch_bytes);

// Writes the code file into the bundle's code/ directory and the input files into the
// scratch directory, owned by the sandbox user.
[[nodiscard]] Status place_run_files(const std::filesystem::path& bundle, const RunPayload& payload,
                                     const std::map<std::string, std::string>& input_files);

}  // namespace cordon::oci
