#include "backend_choice.h"

#include <tuple>

namespace cordon::cli {
namespace {

// Finer ranking among backends with the same isolation score: every aspect counts, a
// partial one half as much, so a backend that also caps memory beats one that does not.
int overall_score(const Capabilities& capabilities) {
  int score = 0;
  for (const Aspect aspect : kAllAspects) {
    switch (capabilities.level(aspect)) {
      case Enforcement::kEnforced:
        score += 2;
        break;
      case Enforcement::kPartial:
        score += 1;
        break;
      case Enforcement::kNone:
        break;
    }
  }
  return score;
}

// A loaded copy of a name wins over a failed one (a shadowed duplicate, say).
const BackendCandidate* find_candidate(const std::vector<BackendCandidate>& candidates,
                                       std::string_view name) {
  const BackendCandidate* found = nullptr;
  for (const BackendCandidate& candidate : candidates) {
    if (candidate.name != name) continue;
    if (candidate.available) return &candidate;
    if (found == nullptr) found = &candidate;
  }
  return found;
}

}  // namespace

std::string available_backend_list(const std::vector<BackendCandidate>& candidates) {
  std::string list;
  for (const BackendCandidate& candidate : candidates) {
    if (!candidate.available) continue;
    if (!list.empty()) list += ", ";
    list += candidate.name;
  }
  return list.empty() ? "none" : list;
}

std::string missing_isolation(const Capabilities& capabilities) {
  std::string missing;
  for (const Aspect aspect : kIsolationAspects) {
    if (capabilities.level(aspect) == Enforcement::kEnforced) continue;
    if (!missing.empty()) missing += ", ";
    missing += to_string(aspect);
  }
  return missing;
}

Result<BackendChoice> choose_backend(const std::vector<BackendCandidate>& candidates,
                                     std::string_view requested, bool allow_unisolated) {
  const std::string available = available_backend_list(candidates);

  if (requested != kAutoBackend) {
    const BackendCandidate* candidate = find_candidate(candidates, requested);
    if (candidate == nullptr) {
      return fail(ErrorCode::kNotFound, "unknown backend '" + std::string(requested) +
                                            "'; available backends: " + available);
    }
    if (!candidate->available) {
      const std::string why = candidate->reason.empty() ? "no reason given" : candidate->reason;
      return fail(ErrorCode::kUnavailable, "backend '" + std::string(requested) +
                                               "' is not available here: " + why +
                                               "; available backends: " + available);
    }
    // Named explicitly: the user chose this backend knowing what it enforces.
    return BackendChoice{candidate->name, candidate->capabilities.isolates()};
  }

  const BackendCandidate* best = nullptr;
  for (const BackendCandidate& candidate : candidates) {
    if (!candidate.available) continue;
    const auto rank = [](const BackendCandidate& c) {
      return std::tuple(c.capabilities.isolation_score(), overall_score(c.capabilities));
    };
    // Ties keep the earlier candidate; callers list candidates in a stable order.
    if (best == nullptr || rank(candidate) > rank(*best)) best = &candidate;
  }
  if (best == nullptr) {
    return fail(ErrorCode::kUnavailable, "no backend is available here (" +
                                             std::to_string(candidates.size()) +
                                             " plugin(s) found); see 'cordon backends'");
  }
  const bool isolates = best->capabilities.isolates();
  if (!isolates && !allow_unisolated) {
    return fail(ErrorCode::kUnavailable,
                "no isolating backend is available: the best, '" + best->name +
                    "', does not enforce " + missing_isolation(best->capabilities) +
                    " isolation; pass --allow-unisolated or -b " + best->name +
                    " to run without it; available backends: " + available);
  }
  return BackendChoice{best->name, isolates};
}

}  // namespace cordon::cli
