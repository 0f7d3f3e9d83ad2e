// The audit's cross-session attempts (issue #41) against a backend that holds sessions: the
// namespace and container backends' tests share the one check.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "audit/catalogue.h"
#include "audit/runner.h"
#include "audit/verdict.h"
#include "cordon/backend.h"
#include "cordon/session.h"

namespace cordon::testing {

// Every attempt of the "sessions" class, run by the audit's own runner and judges: across
// two sessions of `backend` each is BLOCKED, and its positive control (probe and victim in
// one session) ESCAPED, so each probe finds what the other session planted wherever it is
// reachable. A SKIPPED (the backend refused to hold the sessions, or a session with an
// allow-list, which sess-proxy needs) fails here.
inline void expect_session_attempts_blocked(Backend& backend, const audit::Catalogue& catalogue) {
  // How many the catalogue has, so that one dropped from it is seen.
  constexpr std::size_t kExpected = 9;
  audit::AuditOptions options;
  for (const audit::Attempt& a : catalogue.attempts) {
    if (a.threat_class == audit::kSessionClass) options.only.push_back(a.id);
  }
  ASSERT_EQ(options.only.size(), kExpected);
  const auto verdicts = audit::run_attempts(backend, catalogue, options);
  ASSERT_TRUE(verdicts.has_value()) << verdicts.error().describe();
  ASSERT_EQ(verdicts->size(), options.only.size());
  for (const audit::AttemptVerdict& v : *verdicts) {
    EXPECT_EQ(v.status, audit::AttemptStatus::kBlocked) << v.id << ": " << v.evidence;
    EXPECT_NE(v.control.find("ESCAPED"), std::string::npos) << v.id << ": " << v.control;
  }
}

}  // namespace cordon::testing
