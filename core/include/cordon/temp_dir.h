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

// Where run directories go: $CORDON_RUN_DIR, else $TMPDIR, else /dev/shm when it is a
// writable tmpfs with room (16 MiB and 1024 inodes free: a full /dev/shm is passed
// over, not a reason to fail), else /tmp. A tmpfs is preferred because a run's directories are made
// and removed on every call: on an ext4 /tmp that costs ~0.5 ms of a ~1 ms run, on tmpfs
// ~0.05 ms. The price is that files the code writes there use memory, not disk.
[[nodiscard]] std::filesystem::path default_run_parent();

// Removes directories "<prefix><pid>-*" under `parent` (default as for create) whose
// owning cordon process is dead (cordon/owner.h): what a SIGKILLed cordon left behind.
// Returns how many were removed.
[[nodiscard]] Result<int> sweep_stale_temp_dirs(std::string_view prefix,
                                                const std::filesystem::path& parent = {});

// Recursive removal without following symlinks; chmods directories it cannot enter.
[[nodiscard]] Status remove_tree(const std::filesystem::path& path);

}  // namespace cordon
