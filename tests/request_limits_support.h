// Cases every backend must pass alike about what a request may ask for (issue #11): the
// code size limit, and limits held to the ranges each backend declares. Each backend's test calls
// these with its own way to run a request.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "cordon/backend.h"
#include "cordon/limit_check.h"
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

// `limits` asking for `value` of `aspect` (in its unit: bytes, processes, milliseconds).
inline Limits limits_with(Aspect aspect, std::uint64_t value) {
  Limits limits;
  switch (aspect) {
    case Aspect::kMemory:
      limits.memory_bytes = value;
      break;
    case Aspect::kProcesses:
      limits.max_processes = value;
      break;
    case Aspect::kCpu:
      limits.cpu_time = std::chrono::milliseconds(static_cast<std::int64_t>(value));
      break;
    case Aspect::kDisk:
      limits.scratch_bytes = value;
      break;
    default:
      limits.output_bytes = value;
      break;
  }
  return limits;
}

// Every limit the backend can be asked for holds the range it declares, at both ends:
// python starts with the limit at its minimum and at its maximum, and one step outside
// either is refused before anything starts. A limit it cannot enforce is refused, never
// dropped. `backend` gives the capabilities; `run` runs a request on it.
inline void expect_declared_ranges_hold(const Backend& backend, const RunFn& run) {
  for (const Aspect aspect : kRequestLimitAspects) {
    SCOPED_TRACE(std::string(to_string(aspect)));
    const Capabilities caps = backend.capabilities(limits_with(aspect, 1));
    const Capability* cap = caps.find(aspect);
    ASSERT_NE(cap, nullptr);
    RunRequest request;
    request.language = Language::kPython;
    request.code = "print('ran')";
    request.timeout = std::chrono::seconds(20);
    if (cap->enforcement == Enforcement::kNone) {
      request.limits = limits_with(aspect, 1);
      expect_refused_before_start(run(request), "cannot enforce");
      continue;
    }
    ASSERT_TRUE(cap->range.has_value()) << "an enforced limit declares the values it accepts";
    const LimitRange range = *cap->range;
    for (const std::uint64_t value : {range.min, range.max}) {
      request.limits = limits_with(aspect, value);
      const RunResult r = run(request);
      EXPECT_EQ(r.outcome, Outcome::kOk)
          << value << ": " << r.error.value_or("") << r.stderr_data << r.stdout_data;
    }
    // (An output cap of 0 is not below the range: it asks for the default.)
    if (range.min > 0 && asked_limit(limits_with(aspect, range.min - 1), aspect)) {
      request.limits = limits_with(aspect, range.min - 1);
      expect_refused_before_start(run(request), "is below what the " + std::string(backend.name()) +
                                                    " backend can honour: it accepts " +
                                                    format_range(aspect, range));
    }
    if (range.max < std::numeric_limits<std::uint64_t>::max() &&
        (aspect != Aspect::kCpu || range.max < static_cast<std::uint64_t>(INT64_MAX))) {
      request.limits = limits_with(aspect, range.max + 1);
      expect_refused_before_start(run(request), "is above what");
    }
  }
}

}  // namespace cordon::testing
