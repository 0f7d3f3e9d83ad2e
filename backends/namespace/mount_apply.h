// One step of the root-filesystem plan, applied in the child: async-signal-safe, no
// allocation. Returns 0 or an errno.
#pragma once

#include <cstddef>
#include <string_view>

#include "child_setup.h"

namespace cordon::ns {

[[nodiscard]] int apply_mount(const ChildMount& m) noexcept;

// The sources of a plan's bind steps, opened (O_PATH, CLOEXEC) before its first step, and
// each bind's step with its source replaced by "/proc/self/fd/N", the opened directory or
// file: the root is assembled on a tmpfs over kStaging, which hides what lies below the
// host's /tmp, so a source there (or reached through a symlink into it) must be held
// before that tmpfs exists. mount(2) follows the magic link to the very file opened, in
// our own mount namespace (opened here, after clone, never in the parent's).
// No allocation: it lives on B's stack.
class PreopenedSources {
 public:
  // Binds past this many are bound by path, as before (a plan has about a dozen).
  static constexpr std::size_t kMax = 256;

  // 0, or the errno of a non-optional source that cannot be opened (failed_step() says
  // which). An optional bind whose source cannot be opened is skipped, as apply_mount()
  // skips one whose source does not exist.
  [[nodiscard]] int open_sources(const ChildMount* mounts, std::size_t count) noexcept;
  [[nodiscard]] int failed_step() const noexcept { return failed_; }
  [[nodiscard]] bool skip(std::size_t step) const noexcept;
  // Step `step` as it is applied: a bind's with its held source.
  [[nodiscard]] const ChildMount& step(const ChildMount* mounts, std::size_t step) noexcept;

 private:
  struct Held {
    std::size_t step = 0;
    int fd = -1;  // -1: an optional source that is missing
    char path[32] = {};
  };
  [[nodiscard]] const Held* find(std::size_t step) const noexcept;
  Held held_[kMax];
  std::size_t count_ = 0;
  int failed_ = -1;
  ChildMount current_;
};

// The mount point (fifth field) of one /proc/self/mountinfo line, unescaped, into `out`
// as a C string; false when the line has none or it does not fit. For the fallback that
// remounts a bind's submounts one by one where mount_setattr is missing.
[[nodiscard]] bool mountinfo_mount_point(std::string_view line, char* out,
                                         std::size_t out_size) noexcept;
// Whether `path` lies strictly below the directory `dir` (both absolute, normalised).
[[nodiscard]] bool path_strictly_under(const char* path, const char* dir) noexcept;

}  // namespace cordon::ns
