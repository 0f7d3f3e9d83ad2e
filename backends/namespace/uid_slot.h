// A host uid of its own for each concurrent run when cordon runs as root.
//
// Slot N is held by an exclusive flock on <runtime dir>/uid-slot-N.lock for the run's
// duration; the sandbox user maps to uid_base + N. A lock dies with its holder, so a
// SIGKILLed cordon frees its slots at once; its files are removed by the next sweep.
// Release unlinks the file while still holding the lock; an acquirer re-checks after
// locking that the path still names the inode it locked (else it lost a race and retries).
#pragma once

#include <cstdint>
#include <filesystem>

#include "cordon/error.h"
#include "cordon/unique_fd.h"

namespace cordon::ns {

class UidSlot {
 public:
  [[nodiscard]] static Result<UidSlot> acquire(const std::filesystem::path& dir,
                                               std::uint32_t slots);
  UidSlot() = default;
  UidSlot(UidSlot&& other) noexcept;
  UidSlot& operator=(UidSlot&& other) noexcept;
  UidSlot(const UidSlot&) = delete;
  UidSlot& operator=(const UidSlot&) = delete;
  ~UidSlot();

  [[nodiscard]] std::uint32_t index() const { return index_; }

 private:
  void release();
  std::filesystem::path path_;
  UniqueFd fd_;
  std::uint32_t index_ = 0;
};

// Removes lock files nobody holds (left by a killed cordon). Returns how many.
[[nodiscard]] int sweep_uid_slots(const std::filesystem::path& dir);

// $CORDON_RUNTIME_DIR if set; else /run/cordon for root; $XDG_RUNTIME_DIR/cordon or
// /tmp/cordon-<uid> otherwise.
[[nodiscard]] std::filesystem::path default_runtime_dir();

}  // namespace cordon::ns
