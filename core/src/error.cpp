#include "cordon/error.h"

#include <cstring>

namespace cordon {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kSystem:
      return "system";
    case ErrorCode::kPlugin:
      return "plugin";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string Error::describe() const {
  if (sys_errno == 0) return message;
  // The GNU strerror_r (g++ defines _GNU_SOURCE) returns a pointer that may or may not be
  // `buf`; plain strerror() is not thread-safe and runs happen on several threads.
  char buf[128];
  const char* text = ::strerror_r(sys_errno, buf, sizeof buf);
  std::string out = message;
  out += ": ";
  out += text;
  return out;
}

}  // namespace cordon
