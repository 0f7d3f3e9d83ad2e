// Opening a backend's session in a test (issue #41): the namespace and container backends'
// session tests share it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "cordon/backend.h"
#include "cordon/session.h"

namespace cordon::testing {

// A session of `backend` opened with `base` (its limits for the session's whole life) and a
// workspace of `workspace_bytes`; null, with the failure recorded, when it is refused.
inline std::unique_ptr<BackendSession> open_test_session(Backend& backend, RunRequest base,
                                                         std::uint64_t workspace_bytes) {
  SessionOptions o;
  o.base = std::move(base);
  o.workspace_bytes = workspace_bytes;
  auto opened = backend.open_session(o);
  EXPECT_TRUE(opened) << opened.error().describe();
  return opened ? std::move(*opened) : nullptr;
}

// The same with a plain sh base request of `limits`.
inline std::unique_ptr<BackendSession> open_test_session(Backend& backend, const Limits& limits,
                                                         std::uint64_t workspace_bytes) {
  RunRequest base;
  base.language = Language::kSh;
  base.code = "true";
  base.limits = limits;
  return open_test_session(backend, std::move(base), workspace_bytes);
}

}  // namespace cordon::testing
