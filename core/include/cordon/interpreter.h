// Resolution of a language to an interpreter and its argv.
//
// Interpreters are looked up on a fixed system PATH, never the caller's: a `python3`
// found first on a user's PATH can be a version-manager shim costing ~380 ms per start.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/request.h"

namespace cordon {

inline constexpr const char* kSandboxPath = "/usr/local/bin:/usr/bin:/bin";

// The executable name for a language: "sh", "bash", "python3".
[[nodiscard]] std::string_view interpreter_name(Language language);

// Finds the interpreter on `search_path` (a PATH-style list) below `root` (the sandbox's
// view of the filesystem; "/" for the host). Returns the path as seen inside `root`.
[[nodiscard]] Result<std::filesystem::path> find_interpreter(
    Language language, std::string_view search_path = kSandboxPath,
    const std::filesystem::path& root = "/");

// argv to run `code` with the interpreter: `[interp, "-c", code]` when the code fits
// in one argument (Linux caps one argv string at 128 KiB), else `[interp, code_file]`
// and *needs_file is set: the caller writes the code to `code_file` first.
[[nodiscard]] std::vector<std::string> interpreter_argv(const std::filesystem::path& interpreter,
                                                        const std::string& code,
                                                        const std::filesystem::path& code_file,
                                                        bool* needs_file);

}  // namespace cordon
