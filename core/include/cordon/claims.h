// What a backend enforces, declared once per aspect as data, and the words rendered from it.
//
// Each backend builds one declaration (a Capability per aspect, made with claim()) from
// what it knows of this host and run: capabilities() is that declaration, and a run's
// `enforced` is rendered from the declaration built for the run's own facts
// (enforced_from()), so the two cannot drift apart. The mechanism is an identifier with
// parameters ({"rlimit", {resource RLIMIT_AS, per process}}) and the value a quantity;
// their words ("RLIMIT_AS per process", "256 MiB") come from render_mechanism() and
// render_value(). The audit's policy hash covers claim_data(): rewording a sentence (the
// renderers, `detail`) leaves it alone; changing what is enforced, how or how much does not.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/capabilities.h"
#include "cordon/limit_check.h"
#include "cordon/result.h"

namespace cordon {

// Conditions a claim holds under, as identifiers (rendered into `detail` where they are
// words for the reader).
inline constexpr std::string_view kDefaultCeiling = "default_ceiling";  // the request set none
inline constexpr std::string_view kNoCgroup = "no_cgroup";  // a cgroup could not be had here
inline constexpr std::string_view kRoot = "root";           // holds because cordon runs as root

// The words of a mechanism (Capability::mechanism, Enforced::mechanism). Kinds: "rlimit"
// (resource, per), "cgroup" (version, files — LimitApplied's words — or controller, group),
// "engine" (flag), "namespace" (type, runtime), "root_fs" (root, image, tmpfs_bytes),
// "clean_environment" (mount_namespace), "seccomp" (policy, version, hash, applied_by),
// "user_space_kernel" (kernel, platform: gVisor's sentry in front of the host's), "tmpfs",
// "capture_cap", "deadline" (kill, runtime). An unknown kind renders as its identifier
// and parameters, never as nothing.
[[nodiscard]] std::string render_mechanism(const Mechanism& mechanism);
[[nodiscard]] std::string render_value(const Quantity& value);

// A cgroup limit's mechanism from LimitGroup's words for it (LimitApplied::mechanism,
// "cgroup v1 memory.limit_in_bytes + memory.memsw.limit_in_bytes"): {"cgroup", version,
// files}, rendered back to the same words.
[[nodiscard]] Mechanism cgroup_mechanism(std::string_view limit_words);

// One aspect's claim: the data, and its words rendered from it. `detail` is prose for the
// reader (what is not covered); it is not part of the claim's data.
[[nodiscard]] Capability claim(Aspect aspect, Enforcement enforcement, Mechanism mechanism,
                               std::optional<Quantity> value, std::string detail,
                               std::optional<LimitRange> range = std::nullopt,
                               std::vector<std::string> conditions = {});
// Not enforced: no mechanism, no value.
[[nodiscard]] Capability no_claim(Aspect aspect, std::string detail,
                                  std::optional<LimitRange> range = std::nullopt);

// The conditions of a limit that was asked for (`requested`), or of the backend's default
// ceiling for it: {} or {kDefaultCeiling}.
[[nodiscard]] std::vector<std::string> ceiling_conditions(bool requested);

// The claims several backends make alike, declared once so that they cannot drift apart
// (docs/CONVENTIONS.md 7b).

// The output cap, the same for every backend and for the run driver's `enforced` entry.
[[nodiscard]] Capability output_claim(std::uint64_t cap_bytes);

// The network aspect of a sandbox in a network namespace of its own with only lo up
// (`detail`: the backend's words on how), or, when `on` is false, with that namespace
// switched off. `egress_proxy`: a run may have a network allow-list, carried by cordon's
// egress proxy (net/run_network.h) into that namespace; the parameter {"egress", "proxy"}.
[[nodiscard]] Capability network_namespace_claim(bool on, std::string detail,
                                                 bool egress_proxy = false);
// Whether a network claim says the backend carries an allow-list (the parameter above);
// for a declaration, whether its network claim does.
[[nodiscard]] bool carries_allow_list(const Capability& network);
[[nodiscard]] bool carries_allow_list(const Capabilities& declaration);

// The syscall filter: seccomp with the policy `name` v`version` (`hash`: its digest), or,
// when `on` is false, switched off.
[[nodiscard]] Capability seccomp_claim(bool on, std::string_view name, int version,
                                       std::string_view hash, std::string detail);

// What a scratch /tmp tmpfs may be sized to: 1 MiB (what a run needs to start) to what the
// kernel takes.
inline constexpr LimitRange kScratchRange{1ULL << 20, kTmpfsSizeMax};

// The disk aspect of a sandbox whose only writable places are a /tmp tmpfs of `bytes` and
// a 16 MiB /dev/shm; `more` is appended to the detail.
[[nodiscard]] Capability scratch_claim(std::uint64_t bytes, std::string_view more = "");

// A CPU-time claim of RLIMIT_CPU per process of `cpu_time`, rounded up to whole seconds as
// the rlimit is applied; `whole`: what it is not the whole of ("sandbox", "container").
[[nodiscard]] Capability rlimit_cpu_claim(std::chrono::milliseconds cpu_time,
                                          std::string_view whole);

// The run's `enforced` entries of a declaration: every aspect enforced in whole or in
// part, with the same mechanism and value words, in declaration order; the timeout and
// the output cap are left to the run driver (it knows the run's deadline and cap).
[[nodiscard]] std::vector<Enforced> enforced_from(const Capabilities& declaration);

// One capability's data ({"mechanism": {"kind", "params": [[name, value], ...]}, "value":
// {"unit", "amount", "text"}, "conditions": [...]}; null where absent): what crosses the
// plugin boundary beside the words (result_json.h), so a plugin's claims keep their data.
[[nodiscard]] nlohmann::json claim_json(const Capability& capability);
// claim_json() read back into `capability`'s by, quantity and conditions; fails naming the
// member of an unexpected shape.
[[nodiscard]] Status read_claim_json(const nlohmann::json& in, Capability& capability);

// The declaration as canonical data (aspect, enforcement, mechanism kind and parameters,
// value, conditions, range; no words): what the audit's policy hash covers. A capability
// without mechanism data (made from words only) contributes its mechanism words.
[[nodiscard]] nlohmann::json claim_data(const Capabilities& declaration);

}  // namespace cordon
