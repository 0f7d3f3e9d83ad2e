// The requests the backend tests run: shell (sh) or Python code with a timeout.
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include "cordon/request.h"

namespace cordon::testing {

inline RunRequest sh(std::string code,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  RunRequest r;
  r.code = std::move(code);
  r.timeout = timeout;
  return r;
}

inline RunRequest py(std::string code,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  RunRequest r = sh(std::move(code), timeout);
  r.language = Language::kPython;
  return r;
}

}  // namespace cordon::testing
