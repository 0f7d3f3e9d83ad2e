#include "uid_slot.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <utility>

#include "cordon/lock_file.h"

namespace cordon::ns {
namespace fs = std::filesystem;
namespace {

fs::path slot_path(const fs::path& dir, std::uint32_t n) {
  return dir / ("uid-slot-" + std::to_string(n) + ".lock");
}

}  // namespace

fs::path default_runtime_dir() {
  if (const char* dir = std::getenv("CORDON_RUNTIME_DIR"); dir != nullptr && dir[0] == '/') {
    return dir;
  }
  if (::geteuid() == 0) return "/run/cordon";
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && xdg[0] == '/') {
    return fs::path(xdg) / "cordon";
  }
  return "/tmp/cordon-" + std::to_string(::geteuid());
}

Result<UidSlot> UidSlot::acquire(const fs::path& dir, std::uint32_t slots) {
  if (slots == 0) return fail(ErrorCode::kInvalidArgument, "no uid slots configured");
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return fail_errno("mkdir " + dir.string());
  // Start where the last acquirer of this process left off: concurrent runs in one
  // process then rarely contend for the same file.
  static std::atomic<std::uint32_t> next{0};
  const std::uint32_t start = next.fetch_add(1) % slots;
  for (std::uint32_t i = 0; i < slots; ++i) {
    const std::uint32_t n = (start + i) % slots;
    const fs::path path = slot_path(dir, n);
    auto fd = try_lock_file(path, LockOpen::kCreateOrOpen);
    if (!fd) return std::unexpected(fd.error());
    if (!fd->valid()) continue;
    UidSlot slot;
    slot.path_ = path;
    slot.fd_ = std::move(*fd);
    slot.index_ = n;
    return slot;
  }
  return fail(ErrorCode::kUnavailable,
              "all " + std::to_string(slots) + " uid slots in " + dir.string() + " are in use");
}

UidSlot::UidSlot(UidSlot&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::move(other.fd_)), index_(other.index_) {
  other.path_.clear();
}

UidSlot& UidSlot::operator=(UidSlot&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    other.path_.clear();
    fd_ = std::move(other.fd_);
    index_ = other.index_;
  }
  return *this;
}

UidSlot::~UidSlot() { release(); }

void UidSlot::release() {
  // Unlink while still locked (see the header), then drop the lock by closing.
  if (fd_.valid() && !path_.empty()) ::unlink(path_.c_str());
  fd_.reset();
  path_.clear();
}

int sweep_uid_slots(const fs::path& dir) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename();
    if (!name.starts_with("uid-slot-") || !name.ends_with(".lock")) continue;
    auto fd = try_lock_file(entry.path(), LockOpen::kCreateOrOpen);
    if (fd && fd->valid()) {
      ::unlink(entry.path().c_str());
      ++removed;
    }
  }
  return removed;
}

}  // namespace cordon::ns
