#include "request_builder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <filesystem>

#include "cordon/interpreter.h"
#include "cordon/limit_check.h"
#include "cordon/net/net_policy.h"
#include "cordon/unique_fd.h"
#include "cordon/units.h"
#include "prompt_command.h"

namespace cordon::cli {
namespace {

// Reads `fd` to its end, but never more than `limit` bytes: one byte over is an error,
// `too_big` the message (an unbounded read of /dev/zero or a huge pipe would take all of
// cordon's memory before the request could be refused).
Result<std::string> read_bounded(int fd, std::uint64_t limit, const std::string& shown,
                                 const std::string& too_big) {
  std::string data;
  std::array<char, 65536> buffer{};
  for (;;) {
    // At most one byte past the limit: enough to tell "exactly the limit" from "more".
    const std::uint64_t room = limit + 1 - data.size();
    const ssize_t n = ::read(fd, buffer.data(), std::min<std::uint64_t>(buffer.size(), room));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("read " + shown);
    }
    if (n == 0) return data;
    data.append(buffer.data(), static_cast<std::size_t>(n));
    if (data.size() > limit) return fail(ErrorCode::kInvalidArgument, too_big);
  }
}

// A file the user names as input: only a regular file (a device, FIFO or directory can
// block, never end, or is not data), read up to `limit` bytes.
Result<std::string> read_file(const std::string& path, std::uint64_t limit,
                              const std::string& too_big) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before fstat can refuse it.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) return fail_errno("cannot open " + path);
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return fail_errno("stat " + path);
  if (!S_ISREG(st.st_mode)) {
    return fail(ErrorCode::kInvalidArgument, path + " is not a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > limit) {
    return fail(ErrorCode::kInvalidArgument, too_big);
  }
  return read_bounded(fd.get(), limit, path, too_big);  // it may grow while we read
}

// "the code in FILE is larger than 1 MiB, ...": code has one limit for every backend.
std::string code_too_big(const std::string& shown) {
  return "the code " + shown + " is larger than " + format_size(kMaxCodeBytes) +
         ", the largest code cordon runs; pass larger data with --file or --stdin-file";
}

std::string input_too_big(const std::string& path, std::uint64_t limit) {
  return path + " is larger than " + format_size(limit) +
         ", the input size limit (raise it with --max-input-size)";
}

// Prefixes an error with the option it came from: "--timeout: ...".
template <typename T>
Result<T> for_option(Result<T> result, std::string_view option) {
  if (!result) result.error().message = std::string(option) + ": " + result.error().message;
  return result;
}

Result<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();  // from_chars is bounded: no terminator needed
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || value == 0) {
    return fail(ErrorCode::kInvalidArgument,
                "'" + std::string(text) + "' is not a positive whole number");
  }
  return value;
}

}  // namespace

Result<NetworkAccess> network_from(const NetworkFlags& flags) {
  NetworkAccess out;
  if (!flags.allow.empty() || !flags.deny.empty()) {
    // Checked here too (validate() does it for every caller) so the error names the flag.
    auto policy = for_option(net::NetPolicy::make(flags.allow, flags.deny), "--allow-net");
    if (!policy) return std::unexpected(policy.error());
    out.allow = flags.allow;
    out.deny = flags.deny;
  }
  if (!flags.deny.empty() && flags.allow.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "--deny-net: without --allow-net there is no network to carve out of");
  }
  if (flags.max_bytes || flags.max_connections) {
    if (flags.allow.empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  std::string(flags.max_bytes ? "--net-max-bytes" : "--net-max-connections") +
                      ": without --allow-net the run has no network to limit");
    }
    if (flags.max_bytes) {
      auto most = for_option(parse_size(*flags.max_bytes), "--net-max-bytes");
      if (!most) return std::unexpected(most.error());
      if (*most == 0) return fail(ErrorCode::kInvalidArgument, "--net-max-bytes: must be above 0");
      out.max_bytes = *most;
    }
    if (flags.max_connections) {
      auto most = for_option(parse_count(*flags.max_connections), "--net-max-connections");
      if (!most) return std::unexpected(most.error());
      if (*most > UINT32_MAX) {
        return fail(ErrorCode::kInvalidArgument, "--net-max-connections: at most 4294967295");
      }
      out.max_connections = static_cast<std::uint32_t>(*most);
    }
  }
  return out;
}

namespace {

Status apply_limits(const RunOptions& options, RunRequest& request,
                    std::uint64_t* max_input_bytes) {
  if (options.timeout) {
    auto timeout = for_option(parse_duration(*options.timeout), "--timeout");
    if (!timeout) return std::unexpected(timeout.error());
    request.timeout = *timeout;
  }
  if (options.memory) {
    auto memory = for_option(parse_size(*options.memory), "--memory");
    if (!memory) return std::unexpected(memory.error());
    request.limits.memory_bytes = *memory;
  }
  if (options.processes) {
    auto processes = for_option(parse_count(*options.processes), "--processes");
    if (!processes) return std::unexpected(processes.error());
    request.limits.max_processes = *processes;
  }
  if (options.cpu) {
    auto cpu = for_option(parse_duration(*options.cpu), "--cpu");
    if (!cpu) return std::unexpected(cpu.error());
    if (cpu->count() <= 0) {
      return fail(ErrorCode::kInvalidArgument, "--cpu: must be more than zero");
    }
    request.limits.cpu_time = *cpu;
  }
  if (options.output_cap) {
    auto cap = for_option(parse_size(*options.output_cap), "--output-cap");
    if (!cap) return std::unexpected(cap.error());
    request.limits.output_bytes = *cap;
  }
  auto network = network_from(options.network);
  if (!network) return std::unexpected(network.error());
  request.network = std::move(*network);
  if (options.max_input_size) {
    auto most = for_option(parse_size(*options.max_input_size), "--max-input-size");
    if (!most) return std::unexpected(most.error());
    if (*most == 0) return fail(ErrorCode::kInvalidArgument, "--max-input-size: must be above 0");
    *max_input_bytes = *most;
  }
  return {};
}

Status apply_code(const RunOptions& options, int stdin_fd, RunRequest& request) {
  if (options.code && options.source) {
    return fail(ErrorCode::kInvalidArgument,
                "give the code once: -c CODE, or FILE, or - for stdin, not both");
  }
  if (!options.code && !options.source) {
    return fail(ErrorCode::kInvalidArgument, "no code given: use -c CODE, FILE, or - for stdin");
  }
  std::optional<Language> inferred;
  if (options.code) {
    request.code = *options.code;
  } else if (*options.source == "-") {
    auto code = read_bounded(stdin_fd, kMaxCodeBytes, "stdin", code_too_big("from stdin"));
    if (!code) return std::unexpected(code.error());
    request.code = std::move(*code);
  } else {
    auto code = read_file(*options.source, kMaxCodeBytes, code_too_big("in " + *options.source));
    if (!code) return std::unexpected(code.error());
    request.code = std::move(*code);
    inferred = language_from_path(*options.source);
  }
  if (options.language) {
    auto language = for_option(parse_language(*options.language), "--language");
    if (!language) return std::unexpected(language.error());
    request.language = *language;
  } else {
    request.language = inferred.value_or(Language::kSh);
  }
  return {};
}

Status apply_inputs(const RunOptions& options, std::uint64_t max_input_bytes, RunRequest& request) {
  for (const std::string& spec_text : options.files) {
    auto spec = for_option(parse_input_file_spec(spec_text), "--file");
    if (!spec) return std::unexpected(spec.error());
    auto bytes = for_option(
        read_file(spec->local, max_input_bytes, input_too_big(spec->local, max_input_bytes)),
        "--file");
    if (!bytes) return std::unexpected(bytes.error());
    if (!request.input_files.emplace(spec->name, std::move(*bytes)).second) {
      return fail(ErrorCode::kInvalidArgument, "--file: '" + spec->name + "' given twice");
    }
  }
  for (const std::string& assignment : options.env) {
    const std::size_t eq = assignment.find('=');
    if (eq == std::string::npos) {
      return fail(ErrorCode::kInvalidArgument, "--env: '" + assignment + "' is not NAME=VALUE");
    }
    request.env.emplace_back(assignment.substr(0, eq), assignment.substr(eq + 1));
  }
  if (options.tool_description) {
    auto ref =
        for_option(parse_tool_description_ref(*options.tool_description), "--tool-description");
    if (!ref) return std::unexpected(ref.error());
    request.tool_description = std::move(*ref);
  }
  if (options.stdin_file) {
    auto data = for_option(read_file(*options.stdin_file, max_input_bytes,
                                     input_too_big(*options.stdin_file, max_input_bytes)),
                           "--stdin-file");
    if (!data) return std::unexpected(data.error());
    request.stdin_data = std::move(*data);
  }
  request.artifact_globs = options.collect;
  return {};
}

}  // namespace

Result<std::string> read_source(const std::string& source, int stdin_fd, std::uint64_t limit,
                                const std::string& too_big) {
  if (source == "-") return read_bounded(stdin_fd, limit, "stdin", too_big);
  return read_file(source, limit, too_big);
}

std::optional<Language> language_from_path(std::string_view path) { return language_of_file(path); }

Result<InputFileSpec> parse_input_file_spec(std::string_view spec) {
  InputFileSpec out;
  const std::size_t colon = spec.rfind(':');
  if (colon == std::string_view::npos) {
    out.local = std::string(spec);
    out.name = std::filesystem::path(out.local).filename().string();
  } else {
    out.local = std::string(spec.substr(0, colon));
    out.name = std::string(spec.substr(colon + 1));
  }
  if (out.local.empty() || out.name.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "'" + std::string(spec) + "' is not LOCAL[:NAME] naming a file");
  }
  return out;
}

Status check_limits_for(const Backend& backend, const RunRequest& request) {
  const auto refusal =
      refuse_limits(request.limits, backend.capabilities(request.limits), backend.name());
  if (!refusal) return {};
  std::string flag;
  switch (refusal->aspect) {
    case Aspect::kMemory:
      flag = "--memory";
      break;
    case Aspect::kProcesses:
      flag = "--processes";
      break;
    case Aspect::kCpu:
      flag = "--cpu";
      break;
    case Aspect::kOutput:
      flag = "--output-cap";
      break;
    default:  // no flag sets it (the scratch size): named as the library names it
      flag = limit_name(refusal->aspect);
      break;
  }
  return fail(ErrorCode::kInvalidArgument, flag + ": " + refusal->reason);
}

Result<RunRequest> build_request(const RunOptions& options, int stdin_fd) {
  RunRequest request;
  // Limits first: a typo in --timeout should not first swallow a script from stdin.
  std::uint64_t max_input_bytes = kDefaultMaxInputBytes;
  if (Status s = apply_limits(options, request, &max_input_bytes); !s) {
    return std::unexpected(s.error());
  }
  if (Status s = apply_code(options, stdin_fd, request); !s) return std::unexpected(s.error());
  if (Status s = apply_inputs(options, max_input_bytes, request); !s) {
    return std::unexpected(s.error());
  }
  // What every backend refuses alike (bad env names, input paths climbing out, ...),
  // refused here already so the message is a usage error, not a sandbox error.
  if (Status s = validate(request); !s) return std::unexpected(s.error());
  return request;
}

}  // namespace cordon::cli
