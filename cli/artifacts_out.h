// Writes collected artifacts into a directory the user named, never outside it.
//
// Artifact paths come from the sandboxed code (it chose the file names), so they are
// untrusted: every path is reduced to safe components, and every file and directory is
// created relative to an fd of the target directory, without following symlinks.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "cordon/result.h"

namespace cordon::cli {

// The path below the artifacts directory for an artifact's path: "" and "." components
// dropped, ".." replaced by "__", control characters by "_", a leading "/" ignored.
// Returns the components; empty when nothing usable is left.
[[nodiscard]] std::vector<std::string> sanitize_artifact_path(std::string_view path);

// Writes each artifact to `dir` (created if missing). Returns the relative paths written.
[[nodiscard]] Result<std::vector<std::string>> write_artifacts(
    const std::filesystem::path& dir, const std::vector<Artifact>& artifacts);

}  // namespace cordon::cli
