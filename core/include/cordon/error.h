// The one error type of cordon's API (docs/error_handling.md).
//
// Fallible functions return Result<T> = std::expected<T, Error>. An Error says what
// failed (code), the errno when a syscall was the cause, and a message with context
// ("mkdir /sys/fs/cgroup/unified/cordon-12-3: Permission denied"). Library code
// returns errors; it does not log them. The *outcome of a run* (ok, failed, timed out,
// sandbox error) is a different type: see result.h.
#pragma once

#include <cerrno>
#include <expected>
#include <string>
#include <string_view>

namespace cordon {

enum class ErrorCode {
  kInvalidArgument,  // the caller asked for something malformed
  kNotFound,         // a named thing (backend, interpreter, file) does not exist
  kUnavailable,      // exists but cannot be used on this host (with the reason)
  kSystem,           // a syscall failed; sys_errno says which errno
  kPlugin,           // a plugin failed to load or has the wrong ABI
  kTimeout,          // a bounded internal step (set-up, teardown) overran its bound
  kInternal,         // a broken invariant inside cordon
};

std::string_view to_string(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  int sys_errno = 0;  // 0 unless a syscall failed
  std::string message;

  // "message: strerror(sys_errno)" when there is an errno, else message.
  [[nodiscard]] std::string describe() const;
};

template <typename T>
using Result = std::expected<T, Error>;

// Status for functions that return nothing on success.
using Status = Result<void>;

[[nodiscard]] inline std::unexpected<Error> fail(ErrorCode code, std::string message) {
  return std::unexpected(Error{code, 0, std::move(message)});
}

// Captures errno at the call site: call it right after the failing syscall.
[[nodiscard]] inline std::unexpected<Error> fail_errno(std::string message, int err = errno) {
  return std::unexpected(Error{ErrorCode::kSystem, err, std::move(message)});
}

}  // namespace cordon
