// Cases every backend must pass alike about what a request may ask for (issue #11): the
// code size limit, and limits refused before anything starts. Each backend's test calls
// these with its own way to run a request.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon::testing {

using RunFn = std::function<RunResult(const RunRequest&)>;

// sh code of exactly `bytes` bytes: prints "start" and "end" around a comment pad.
inline std::string sh_code_of_size(std::size_t bytes) {
  const std::string head = "echo start\n#";
  const std::string tail = "\necho end\n";
  return head + std::string(bytes - head.size() - tail.size(), '#') + tail;
}

// A run the backend refused before starting anything: a sandbox error saying the request
// is invalid and naming `says`, and no output.
inline void expect_refused_before_start(const RunResult& r, const std::string& says) {
  EXPECT_EQ(r.outcome, Outcome::kSandboxError) << r.stdout_data << r.stderr_data;
  const std::string error = r.error.value_or("");
  EXPECT_NE(error.find("invalid request"), std::string::npos) << error;
  EXPECT_NE(error.find(says), std::string::npos) << error;
  EXPECT_TRUE(r.stdout_data.empty()) << r.stdout_data;
}

// Code of kMaxCodeBytes runs whole; one byte more is refused before anything starts.
inline void expect_code_size_limit(const RunFn& run) {
  RunRequest request;
  request.timeout = std::chrono::seconds(20);
  request.code = sh_code_of_size(kMaxCodeBytes);
  const RunResult r = run(request);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "start\nend\n");
  request.code = sh_code_of_size(kMaxCodeBytes + 1);
  expect_refused_before_start(run(request), "more than 1 MiB");
}

}  // namespace cordon::testing
