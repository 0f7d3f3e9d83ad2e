// A private temporary directory removed, with everything in it, on destruction.
// Removal never follows symlinks (the code may have planted some pointing at host
// files) and copes with directories the code made unreadable.
#pragma once

#include <filesystem>
#include <string_view>

#include "cordon/error.h"

namespace cordon {

class TempDir {
 public:
  // mkdtemp under `parent` (default: $TMPDIR or /tmp) named "<prefix>XXXXXX", mode 0700.
  [[nodiscard]] static Result<TempDir> create(std::string_view prefix,
                                              const std::filesystem::path& parent = {});
  TempDir() = default;
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // Removes now and reports failure (the destructor does the same, silently).
  [[nodiscard]] Status remove();

 private:
  explicit TempDir(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

// Recursive removal without following symlinks; chmods directories it cannot enter.
[[nodiscard]] Status remove_tree(const std::filesystem::path& path);

}  // namespace cordon
