#include "cordon/request.h"

#include <string>

#include "cordon/interpreter.h"
#include "cordon/net/net_policy.h"
#include "cordon/net/run_network.h"
#include "cordon/text.h"
#include "cordon/units.h"

namespace cordon {

std::string_view to_string(Language language) { return interpreter_spec(language).name; }

Result<Language> parse_language(std::string_view text) {
  // An alias is what people type besides the name ("python3", the executable; "js", "node").
  std::vector<std::string> names;
  for (const InterpreterSpec& spec : kInterpreters) {
    if (text == spec.name) return spec.language;
    for (const std::string_view alias : spec.aliases) {
      if (!alias.empty() && text == alias) return spec.language;
    }
    names.emplace_back(spec.name);
  }
  return fail(ErrorCode::kInvalidArgument,
              "unknown language '" + std::string(text) + "' (expected " + join(names) + ")");
}

std::chrono::milliseconds effective_timeout(const RunRequest& request) {
  return request.timeout.count() <= 0 ? kDefaultTimeout : request.timeout;
}

std::uint64_t effective_output_cap(const Limits& limits) {
  return limits.output_bytes == 0 ? kDefaultOutputBytes : limits.output_bytes;
}

namespace {

bool valid_env_name(std::string_view name) {
  if (name.empty()) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(name.front())) return false;
  for (char c : name) {
    if (!alpha(c) && !digit(c)) return false;
  }
  return true;
}

// The path must stay below the working directory: relative, no "..", no NUL (which
// would silently cut the path short at the syscall), and naming a file rather than a
// directory. "." and repeated slashes in the middle are harmless and allowed.
Status check_input_path(std::string_view path) {
  auto bad = [&](std::string_view why) {
    return fail(ErrorCode::kInvalidArgument,
                "input file path '" + std::string(path) + "' " + std::string(why));
  };
  if (path.empty()) return bad("is empty");
  if (path.find('\0') != std::string_view::npos) return bad("contains a NUL byte");
  if (path.front() == '/') return bad("is absolute");
  if (path.back() == '/') return bad("ends with '/'");
  std::string_view rest = path;
  std::string_view last;
  while (!rest.empty()) {
    const auto slash = rest.find('/');
    last = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    if (last == "..") return bad("contains a '..' component");
  }
  if (last == ".") return bad("does not name a file");
  return {};
}

}  // namespace

Status validate(const RunRequest& request) {
  if (request.code.size() > kMaxCodeBytes) {
    return fail(ErrorCode::kInvalidArgument,
                "the code is " + std::to_string(request.code.size()) + " bytes, more than " +
                    format_size(kMaxCodeBytes) +
                    " (kMaxCodeBytes), the largest code any backend runs; pass larger data "
                    "as an input file");
  }
  for (const auto& [name, value] : request.env) {
    if (!valid_env_name(name)) {
      return fail(ErrorCode::kInvalidArgument,
                  "environment variable name '" + name + "' is not [A-Za-z_][A-Za-z0-9_]*");
    }
    if (name == "PATH" || name == "HOME") {
      return fail(
          ErrorCode::kInvalidArgument,
          "environment variable " + name + " is set by the sandbox and cannot be overridden");
    }
    // execve() takes C strings: a NUL would silently cut the value short.
    if (value.find('\0') != std::string::npos) {
      return fail(ErrorCode::kInvalidArgument,
                  "environment variable " + name + " has a NUL byte in its value");
    }
  }
  for (const auto& [path, bytes] : request.input_files) {
    if (auto status = check_input_path(path); !status) return status;
  }
  if (!request.network.allow.empty() || !request.network.deny.empty()) {
    auto policy = net::NetPolicy::make(request.network.allow, request.network.deny);
    if (!policy) return std::unexpected(policy.error());
  }
  if (request.network.any()) {
    // The proxy's address is the sandbox's to set: another would lead nowhere, or around it.
    for (const auto& [name, value] : request.env) {
      for (const auto& [proxy_name, proxy_value] : net::proxy_environment(request.network)) {
        if (name == proxy_name) {
          return fail(ErrorCode::kInvalidArgument,
                      "environment variable " + name +
                          " is set by the sandbox for its network allow-list and cannot be "
                          "overridden");
        }
      }
    }
  }
  for (const auto& glob : request.artifact_globs) {
    if (glob.empty()) return fail(ErrorCode::kInvalidArgument, "artifact glob is empty");
    if (glob.find('\0') != std::string::npos) {
      return fail(ErrorCode::kInvalidArgument, "artifact glob contains a NUL byte");
    }
  }
  return {};
}

}  // namespace cordon
