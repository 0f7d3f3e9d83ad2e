// A backend's plan for one request (Backend::describe_plan): what a run would apply, made
// without creating anything. Typed on both sides of the plugin boundary: a backend builds a
// Plan, plugin_export.h writes it as JSON once, the loader reads it back once with
// plan_from_json() (strict: a known member of the wrong shape is the plugin's error, named),
// and the front ends complete it (frontend/plan_text.h) and render text and JSON from it.
//
// The members are the ones every plan shares, which `cordon plan` renders. What only one
// backend says (the container's OCI config, the namespace backend's env and gid map, ...)
// travels in `extra`, verbatim: shown by `cordon plan --json`, never interpreted.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cordon/capabilities.h"
#include "cordon/error.h"

namespace cordon {

// One step of the sandbox's filesystem set-up, in order: a mount ("root", "bind", "tmpfs",
// "proc", "mask", "readonly", an OCI mount type) or a file operation ("mkdir", "mkfile",
// "write_file", "symlink").
// The {} are for g++: -Wmissing-field-initializers flags designated initialisers that skip
// a member without a default member initialiser.
// NOLINTBEGIN(readability-redundant-member-init)
struct PlanStep {
  std::string op{};
  std::string target{};
  std::string source{};              // "" when none (a symlink's target is its source)
  std::string options{};             // mount data: "size=67108864,mode=1777"
  std::string contents{};            // what write_file writes
  std::string mode{};                // "0644"; "" when not set
  std::vector<std::string> flags{};  // "ro", "nosuid", "nodev", "noexec", ...
  bool optional = false;             // skipped when the source does not exist
  friend bool operator==(const PlanStep&, const PlanStep&) = default;
};
// NOLINTEND(readability-redundant-member-init)

struct PlanFilesystem {
  std::vector<PlanStep> steps;
  nlohmann::json extra = nlohmann::json::object();  // hostname, uid, home, ... as the backend says
  friend bool operator==(const PlanFilesystem&, const PlanFilesystem&) = default;
};

// How many rules of each kind a syscall policy has (frontend's syscall_rule_counts()).
struct SyscallRuleCounts {
  int allowed = 0;      // unconditional
  int by_argument = 0;  // allowed or denied depending on one argument
  int denied = 0;       // EPERM and other errnos, named explicitly
  int killed = 0;
  std::string otherwise;  // the verdict of every syscall the policy does not name
  friend bool operator==(const SyscallRuleCounts&, const SyscallRuleCounts&) = default;
};

struct PlanSeccomp {
  std::string policy;  // "cordon-default"
  int version = 0;
  std::string hash;                        // the policy's content hash
  std::optional<SyscallRuleCounts> rules;  // when cordon knows the policy by its hash
  friend bool operator==(const PlanSeccomp&, const PlanSeccomp&) = default;
};

// One limit as the backend's declaration words it (plan_limits() in backend.h).
struct PlanLimit {
  Aspect aspect = Aspect::kTimeout;
  std::optional<std::string> value;  // "256 MiB"; unset when none applies
  std::string by;                    // the mechanism, or "not enforced"
  Enforcement enforcement = Enforcement::kNone;
  bool is_default = false;  // a ceiling the backend applies though none was asked for
  friend bool operator==(const PlanLimit&, const PlanLimit&) = default;
};

struct PlanRlimit {
  std::string resource;  // "RLIMIT_NOFILE"
  std::uint64_t soft = 0;
  std::uint64_t hard = 0;  // UINT64_MAX: unlimited
  friend bool operator==(const PlanRlimit&, const PlanRlimit&) = default;
};

struct PlanUser {
  std::int64_t uid = 0;
  std::int64_t gid = 0;
  friend bool operator==(const PlanUser&, const PlanUser&) = default;
};

// What a plan may leave unsaid is optional: "not stated" is never read as "none" (a plan
// without a filesystem must not read as the host's filesystem, unless it says so).
struct Plan {
  std::string backend_name;
  std::string backend_version;
  // How the front end chose the backend (`--backend auto` or a name) and why; "" when
  // no front end chose (a backend's own plan).
  std::string choice_requested;
  std::string choice_reason;
  std::optional<bool> isolates;
  std::optional<std::int64_t> timeout_ms;
  std::optional<std::vector<std::string>> namespaces;  // empty: none
  // Unset: not stated. Stated as none (null): the code sees the host's filesystem.
  std::optional<std::optional<PlanFilesystem>> filesystem;
  std::optional<PlanUser> user;
  std::string uid_map;                 // "0 100000 1"; "" when none
  std::string hostname;                // "" when not stated
  std::string network;                 // in words: "loopback only (...)"
  std::string linux_capabilities;      // in words: "all dropped; no_new_privs"
  std::optional<PlanSeccomp> seccomp;  // unset: no syscall filter
  std::vector<PlanLimit> limits;
  std::optional<Capabilities> aspects;  // what capabilities() says for the request's limits
  std::vector<PlanRlimit> rlimits;
  std::vector<std::string> argv;
  std::string cwd;
  // The languages the backend runs here (interpreter.h's names), as the front end found them
  // (frontend/prompt_render.h available_languages()); empty: not stated.
  std::vector<std::string> languages;
  nlohmann::json extra = nlohmann::json::object();  // the backend's own members, verbatim
};

// The JSON form (`cordon plan --json`, the plugin boundary): the members above under the
// names README's "cordon plan" lists, then `extra`'s members (never overriding one above).
[[nodiscard]] nlohmann::json to_json(const Plan& plan);
// The inverse. Fails naming the member on a known member of the wrong shape; an unknown
// member goes to `extra`.
[[nodiscard]] Result<Plan> plan_from_json(const nlohmann::json& in);

}  // namespace cordon
