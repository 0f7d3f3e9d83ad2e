// The working directory of a run: input files in before, artifacts out after.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "cordon/result.h"

namespace cordon {

// Writes each input file under `dir` (creating parent directories). Paths were checked
// by validate(); files are created with O_EXCL|O_NOFOLLOW so nothing outside is touched.
[[nodiscard]] Status place_input_files(const std::filesystem::path& dir,
                                       const std::map<std::string, std::string>& files);

// Creates `path` with `bytes` and `mode` (exactly: umask does not narrow it). O_EXCL and
// O_NOFOLLOW: never writes through an existing file or symlink. For the files a backend
// puts in a run's own directories (the code file, an OCI bundle's config.json).
[[nodiscard]] Status write_new_file(const std::filesystem::path& path, std::string_view bytes,
                                    mode_t mode);

// Collects regular files under `dir` whose relative path matches any glob. Symlinks are
// never followed (neither as matches nor while walking); at most `max_total_bytes` of
// content in all; files that would exceed it are skipped and `skipped` lists them.
struct CollectedArtifacts {
  std::vector<Artifact> artifacts;
  std::vector<std::string> skipped;  // "path: reason"
};
[[nodiscard]] Result<CollectedArtifacts> collect_artifacts(const std::filesystem::path& dir,
                                                           const std::vector<std::string>& globs,
                                                           std::uint64_t max_total_bytes);

}  // namespace cordon
