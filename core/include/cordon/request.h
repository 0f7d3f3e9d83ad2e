// What a caller hands to a backend: untrusted code, a timeout, limits, inputs.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/error.h"

namespace cordon {

// The languages cordon runs; how each is named, found and started is the interpreter table
// (interpreter.h kInterpreters), the one place a language is added.
enum class Language { kSh, kBash, kPython, kJavaScript, kPerl };

std::string_view to_string(Language language);
[[nodiscard]] Result<Language> parse_language(std::string_view text);

inline constexpr std::chrono::milliseconds kDefaultTimeout{5000};
inline constexpr std::uint64_t kDefaultOutputBytes = 1u << 20;         // per stream
inline constexpr std::uint64_t kDefaultArtifactBytes = 16u << 20;      // all artifacts
inline constexpr std::chrono::milliseconds kDefaultSetupBound{10000};  // set-up + teardown
// The largest code a request may carry, the same for every backend: validate() refuses
// more (larger data goes in as input files), and the tool description states this value.
inline constexpr std::uint64_t kMaxCodeBytes = 1u << 20;
// The largest output cap (Limits::output_bytes) any backend accepts: cordon keeps up to
// this much of each stream in its own memory.
inline constexpr std::uint64_t kMaxOutputBytes = 1u << 30;

// Resource ceilings. An unset optional means "no ceiling asked for"; whether and how a
// backend enforces each one is stated by its capabilities() and, per run, in
// RunResult::enforced. Never dropped in silence: a backend refuses, before anything
// starts, a limit it does not enforce at all or a value outside the range it declares
// (check_limits(), limit_check.h).
struct Limits {
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> max_processes;
  std::optional<std::chrono::milliseconds> cpu_time;
  std::uint64_t output_bytes = kDefaultOutputBytes;  // per stream; 0 = the default
  std::optional<std::uint64_t> scratch_bytes;        // size of the writable scratch

  // Every field, so a field added later is compared too (the namespace backend's
  // capabilities memo answers only for the limits it was asked with).
  friend bool operator==(const Limits&, const Limits&) = default;
};

// The network a run may reach (issue #16). Empty `allow`: none at all, the default. Entries
// are DOMAIN, *.DOMAIN, HOST:PORT, an address or a CIDR (net/net_policy.h); a `deny` entry
// wins over an `allow` entry. A backend that cannot carry an allow-list refuses a request
// with one (check_request()), never runs it with more network or without.
struct NetworkAccess {
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  std::optional<std::uint64_t> max_bytes;        // in + out over the run
  std::optional<std::uint32_t> max_connections;  // requests through the proxy over the run

  [[nodiscard]] bool any() const { return !allow.empty(); }
  bool operator==(const NetworkAccess&) const = default;
};

struct ToolDescriptionRef {
  std::string id;
  int version = 0;
};

// The environment a run's code saw (frontend/environment.h): its name ("host" for the
// host's own /usr, "" for an unregistered --rootfs) and content digest ("" for the host).
// Set by the front end that created the backend on it; recorded in the Result and history.
struct EnvironmentRef {
  std::string name;
  std::string digest;
  bool operator==(const EnvironmentRef&) const = default;
};

struct RunRequest {
  std::string code;
  Language language = Language::kSh;
  // 0 or negative means kDefaultTimeout: a run is never unbounded.
  std::chrono::milliseconds timeout{0};
  Limits limits;
  std::optional<std::string> stdin_data;  // unset: stdin is /dev/null
  // Extra environment for the code. The caller's own environment is never passed
  // through; names must be valid ([A-Za-z_][A-Za-z0-9_]*) and must not override the
  // sandbox's PATH/HOME.
  std::vector<std::pair<std::string, std::string>> env;
  // Placed in the working directory before the run: relative path -> bytes.
  std::map<std::string, std::string> input_files;
  // Globs (fnmatch, FNM_PATHNAME) matched against paths relative to the working
  // directory after the run; a glob without '/' also matches the bare file name at any
  // depth ("*.png" finds "out/a.png"). No FNM_PERIOD: "*" matches dotfiles too.
  // Regular files only; symlinks are never followed.
  std::vector<std::string> artifact_globs;
  std::uint64_t artifact_max_bytes = kDefaultArtifactBytes;
  // Bound on sandbox set-up and teardown, separate from the code's timeout.
  std::chrono::milliseconds setup_bound = kDefaultSetupBound;
  std::optional<ToolDescriptionRef> tool_description;
  NetworkAccess network;
  // A label the loader copies into the Result (plugin_backend.cpp); the backend's own
  // environment is fixed when it is created (BackendOptions::system_root).
  std::optional<EnvironmentRef> environment;
};

// The timeout a backend must apply: the request's, or the default when <= 0.
[[nodiscard]] std::chrono::milliseconds effective_timeout(const RunRequest& request);
// The output cap per stream: the request's, or the default when 0.
[[nodiscard]] std::uint64_t effective_output_cap(const Limits& limits);

// Checks what every backend must refuse alike: code over kMaxCodeBytes, malformed env names (or
// PATH/HOME), NUL bytes in env values, input file paths that are absolute, climb out with "..",
// name no file or hold a NUL, empty globs, and network entries NetPolicy does not take.
[[nodiscard]] Status validate(const RunRequest& request);

}  // namespace cordon
