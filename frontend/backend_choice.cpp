#include "frontend/backend_choice.h"

#include <algorithm>
#include <iterator>
#include <tuple>

namespace cordon::frontend {
namespace {

// What `auto` compares (backend_choice.h): isolation aspects fully enforced, then all
// aspects fully enforced.
struct Strength {
  int isolation = 0;
  int enforced = 0;
  auto operator<=>(const Strength&) const = default;
};

Strength strength_of(const Capabilities& capabilities) {
  Strength s{.isolation = capabilities.isolation_score(), .enforced = 0};
  for (const Aspect aspect : kAllAspects) {
    if (capabilities.level(aspect) == Enforcement::kEnforced) ++s.enforced;
  }
  return s;
}

// Place in the fixed order among equally strong backends: kAutoOrder, then the rest.
std::size_t order_of(std::string_view name) {
  const auto* it = std::ranges::find(kAutoOrder, name);
  return static_cast<std::size_t>(it - std::begin(kAutoOrder));
}

// Whether `a` goes before `b`: stronger, else earlier in the fixed order, else by name.
bool ranks_before(const BackendCandidate& a, const BackendCandidate& b) {
  const Strength sa = strength_of(a.capabilities);
  const Strength sb = strength_of(b.capabilities);
  if (sa != sb) return sa > sb;
  return std::tuple(order_of(a.name), a.name) < std::tuple(order_of(b.name), b.name);
}

std::string fixed_order_text() {
  std::string out;
  for (const std::string_view name : kAutoOrder) out += std::string(name) + ", ";
  return out + "then by name";
}

// "enforces all 4 isolation aspects, 10 of 11 aspects in all".
std::string strength_text(const Strength& s) {
  const std::size_t isolation_total = std::size(kIsolationAspects);
  const std::string isolation =
      s.isolation == static_cast<int>(isolation_total)
          ? "all " + std::to_string(isolation_total)
          : std::to_string(s.isolation) + " of " + std::to_string(isolation_total);
  return "enforces " + isolation + " isolation aspects, " + std::to_string(s.enforced) + " of " +
         std::to_string(std::size(kAllAspects)) + " aspects in all";
}

// Why `best` and not `next` (the runner-up, null when `best` was the only one).
std::string auto_reason(const BackendCandidate& best, const BackendCandidate* next) {
  const Strength sb = strength_of(best.capabilities);
  std::string out = "auto chose " + best.name + ": " + strength_text(sb);
  if (next == nullptr) return out + "; the only available backend";
  const Strength sn = strength_of(next->capabilities);
  if (sn == sb) {
    return out + "; " + next->name + " is equally strong, and " + best.name +
           " comes first in the fixed order (" + fixed_order_text() + ")";
  }
  return out + "; the next, " + next->name + ", " + strength_text(sn);
}

// A loaded copy of a name wins over a failed one (a shadowed duplicate, say). Without an
// entry of that label, the plugin of that name when it made just one (`-b container
// --runtime runsc` lists as "container (runsc)").
const BackendCandidate* find_candidate(const std::vector<BackendCandidate>& candidates,
                                       std::string_view name) {
  const BackendCandidate* found = nullptr;
  for (const BackendCandidate& candidate : candidates) {
    if (candidate.name != name) continue;
    if (candidate.available) return &candidate;
    if (found == nullptr) found = &candidate;
  }
  if (found != nullptr) return found;
  for (const BackendCandidate& candidate : candidates) {
    if (candidate.plugin != name) continue;
    if (found != nullptr) return nullptr;  // several: only their labels name one
    found = &candidate;
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
    return BackendChoice{.name = candidate->name,
                         .isolates = candidate->capabilities.isolates(),
                         .reason = "named with --backend"};
  }

  const BackendCandidate* best = nullptr;
  const BackendCandidate* next = nullptr;
  for (const BackendCandidate& candidate : candidates) {
    if (!candidate.available || candidate.opt_in) continue;
    if (best == nullptr || ranks_before(candidate, *best)) {
      if (best != nullptr && best->name != candidate.name) next = best;
      best = &candidate;
    } else if (candidate.name != best->name &&
               (next == nullptr || ranks_before(candidate, *next))) {
      next = &candidate;
    }
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
  return BackendChoice{
      .name = best->name, .isolates = isolates, .reason = auto_reason(*best, next)};
}

}  // namespace cordon::frontend
