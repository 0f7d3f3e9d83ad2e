// RunOptions -> RunRequest: parses durations and sizes, reads the code, input files and
// stdin file. Every error is a usage error (exit 125) with a message naming the option.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/backend.h"
#include "cordon/error.h"
#include "cordon/request.h"
#include "run_options.h"

namespace cordon::cli {

// Reads the code from stdin when options.source is "-" (fd `stdin_fd`). Every input is
// read with a bound: the code (FILE, stdin) up to kMaxCodeBytes, each --file and the
// --stdin-file up to --max-input-size (kDefaultMaxInputBytes); a FILE, --file or
// --stdin-file must be a regular file, stdin may be a pipe.
[[nodiscard]] Result<RunRequest> build_request(const RunOptions& options, int stdin_fd = 0);

// The allow-list flags read into the request's network: entries checked (the error names
// the flag), limits parsed; --deny-net, --net-max-bytes or --net-max-connections without
// --allow-net is an error (there is no network for them to act on).
[[nodiscard]] Result<NetworkAccess> network_from(const NetworkFlags& flags);

// The bytes of FILE, or of stdin (fd `stdin_fd`) for "-", up to `limit` (more is
// kInvalidArgument `too_big`); a FILE must be a regular file, stdin may be a pipe.
[[nodiscard]] Result<std::string> read_source(const std::string& source, int stdin_fd,
                                              std::uint64_t limit, const std::string& too_big);

// The request's limits against what `backend` can honour (refuse_limits(), limit_check.h),
// before anything starts; the error names the flag: "--memory: 1 B is below what the
// namespace backend can honour: it accepts 16 MiB to 8 EiB".
[[nodiscard]] Status check_limits_for(const Backend& backend, const RunRequest& request);

// The language a file's extension suggests (".py", ".sh", ".bash"), if any.
[[nodiscard]] std::optional<Language> language_from_path(std::string_view path);

// "LOCAL[:NAME]" -> {LOCAL, NAME}: split at the last ':'; NAME defaults to LOCAL's file name.
struct InputFileSpec {
  std::string local;
  std::string name;
};
[[nodiscard]] Result<InputFileSpec> parse_input_file_spec(std::string_view spec);

}  // namespace cordon::cli
