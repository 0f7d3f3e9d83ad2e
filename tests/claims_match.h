// What a run reports in `enforced` is what the backend's capabilities() claim for the
// same limits on this host, aspect by aspect (cordon/claims.h: both are rendered from
// the backend's one declaration). Shared by the backend suites.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cordon/backend.h"
#include "cordon/capabilities.h"
#include "cordon/result.h"

namespace cordon::testing {

inline void expect_run_enforces_what_is_claimed(const RunResult& run, const Capabilities& claimed) {
  std::set<Aspect> reported;
  for (const Enforced& e : run.enforced) {
    EXPECT_TRUE(reported.insert(e.aspect).second) << to_string(e.aspect) << " reported twice";
    const Capability* c = claimed.find(e.aspect);
    ASSERT_NE(c, nullptr) << to_string(e.aspect);
    EXPECT_NE(c->enforcement, Enforcement::kNone)
        << to_string(e.aspect) << ": reported as " << e.mechanism << ", claimed not enforced";
    EXPECT_EQ(e.mechanism, c->mechanism) << to_string(e.aspect);
    // The timeout's value is the run's own deadline; capabilities() has no request.
    if (e.aspect != Aspect::kTimeout) {
      EXPECT_EQ(e.value, c->value) << to_string(e.aspect);
    }
  }
  for (const Capability& c : claimed.aspects) {
    if (c.enforcement == Enforcement::kNone) continue;
    EXPECT_TRUE(reported.contains(c.aspect))
        << to_string(c.aspect) << ": claimed (" << c.mechanism << "), not reported by the run";
  }
}

// The limits a plan lists (describe_plan's limits: aspect, value, mechanism in words) name
// each limit as the claim does: the plan is rendered from the same declaration.
inline void expect_plan_names_what_is_claimed(const Backend& backend, const RunRequest& request) {
  const Result<Plan> plan = backend.describe_plan(request);
  ASSERT_TRUE(plan) << plan.error().describe();
  const Capabilities claimed = backend.capabilities(request.limits);
  ASSERT_FALSE(plan->limits.empty()) << to_json(*plan).dump();
  for (const PlanLimit& entry : plan->limits) {
    const std::string name(to_string(entry.aspect));
    const Capability* c = claimed.find(entry.aspect);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(entry.by, c->mechanism.empty() ? "not enforced" : c->mechanism) << name;
    if (c->value && entry.aspect != Aspect::kTimeout) {
      EXPECT_EQ(entry.value, *c->value) << name;
    }
  }
}

// Runs `true` with each of `limits` through `run` and checks each run against what
// `backend` claims for the same limits.
inline void expect_runs_enforce_what_is_claimed(
    const std::function<RunResult(const RunRequest&)>& run, const Backend& backend,
    std::initializer_list<Limits> limits) {
  for (const Limits& l : limits) {
    RunRequest req;
    req.code = "true";
    req.limits = l;
    const RunResult r = run(req);
    ASSERT_TRUE(r.ok()) << r.error.value_or("") << r.stderr_data;
    expect_run_enforces_what_is_claimed(r, backend.capabilities(l));
    expect_plan_names_what_is_claimed(backend, req);
  }
}

}  // namespace cordon::testing
