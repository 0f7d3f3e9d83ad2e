#include "cordon/capabilities.h"

#include <algorithm>

namespace cordon {

std::string_view to_string(Aspect aspect) {
  switch (aspect) {
    case Aspect::kNetwork:
      return "network";
    case Aspect::kFilesystem:
      return "filesystem";
    case Aspect::kEnvironment:
      return "environment";
    case Aspect::kProcessTree:
      return "process_tree";
    case Aspect::kSyscallFilter:
      return "syscall_filter";
    case Aspect::kMemory:
      return "memory";
    case Aspect::kProcesses:
      return "processes";
    case Aspect::kCpu:
      return "cpu";
    case Aspect::kDisk:
      return "disk";
    case Aspect::kOutput:
      return "output";
    case Aspect::kTimeout:
      return "timeout";
  }
  return "unknown";
}

std::string_view to_string(Enforcement enforcement) {
  switch (enforcement) {
    case Enforcement::kNone:
      return "none";
    case Enforcement::kPartial:
      return "partial";
    case Enforcement::kEnforced:
      return "enforced";
  }
  return "unknown";
}

const Capability* Capabilities::find(Aspect aspect) const {
  const auto it = std::ranges::find(aspects, aspect, &Capability::aspect);
  return it == aspects.end() ? nullptr : &*it;
}

Enforcement Capabilities::level(Aspect aspect) const {
  const Capability* capability = find(aspect);
  return capability ? capability->enforcement : Enforcement::kNone;
}

int Capabilities::isolation_score() const {
  // Partial isolation does not count: `--backend auto` must not rank a backend up for a
  // measure that leaves a hole.
  return static_cast<int>(std::ranges::count_if(kIsolationAspects, [this](Aspect aspect) {
    return level(aspect) == Enforcement::kEnforced;
  }));
}

bool Capabilities::isolates() const {
  return isolation_score() == static_cast<int>(std::size(kIsolationAspects));
}

}  // namespace cordon
