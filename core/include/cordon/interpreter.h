// Resolution of a language to an interpreter and its argv.
//
// Interpreters are looked up on a fixed system PATH, never the caller's: a `python3`
// found first on a user's PATH can be a version-manager shim costing ~380 ms per start.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "cordon/request.h"

namespace cordon {

inline constexpr const char* kSandboxPath = "/usr/local/bin:/usr/bin:/bin";

// One language: its name (to_string(), --language, the tool's enum), the other names
// --language takes, the file extensions that imply it, its interpreter's executable (found
// on the sandbox's PATH), the flag that runs code given in argv (code too long for argv
// goes in a file: [exe, file]), and a program printing one line that names the interpreter
// (what the audit measures inside the sandbox and the tool description states).
struct InterpreterSpec {
  Language language;
  std::string_view name;
  std::array<std::string_view, 2> aliases;  // "" where none
  std::array<std::string_view, 2> extensions;
  std::string_view executable;
  std::string_view inline_flag;
  std::string_view version_probe;
  // It reserves far more address space than it uses (V8: node fails under an RLIMIT_AS of
  // 512 MiB, printing 42 needs about 1 GiB): a memory limit that is a per-process RLIMIT_AS
  // cannot bound it, so a backend whose memory limit is one refuses it (check_request()).
  bool reserves_address_space = false;
};

// In the order a tool description offers them. sh has no version variable (dash has no
// --version at all): its identity is the program the kernel runs for it.
inline constexpr InterpreterSpec kInterpreters[] = {
    {.language = Language::kPython,
     .name = "python",
     .aliases = {"python3", ""},
     .extensions = {".py", ""},
     .executable = "python3",
     .inline_flag = "-c",
     .version_probe = "import platform\nprint('Python ' + platform.python_version())\n",
     .reserves_address_space = false},
    {.language = Language::kBash,
     .name = "bash",
     .aliases = {"", ""},
     .extensions = {".bash", ""},
     .executable = "bash",
     .inline_flag = "-c",
     .version_probe = "echo \"bash ${BASH_VERSION}\"\n",
     .reserves_address_space = false},
    {.language = Language::kSh,
     .name = "sh",
     .aliases = {"", ""},
     .extensions = {".sh", ""},
     .executable = "sh",
     .inline_flag = "-c",
     // gVisor's /proc answers EINVAL for /proc/PID/exe: then the program `sh` names on PATH.
     .version_probe = "exe=$(readlink /proc/$$/exe) || exe=$(readlink -f \"$(command -v sh)\")"
                      " && echo \"${exe##*/}\"\n",
     .reserves_address_space = false},
    {.language = Language::kJavaScript,
     .name = "javascript",
     .aliases = {"js", "node"},
     .extensions = {".js", ".mjs"},
     .executable = "node",
     .inline_flag = "-e",
     .version_probe = "console.log('Node.js ' + process.version)\n",
     .reserves_address_space = true},
    {.language = Language::kPerl,
     .name = "perl",
     .aliases = {"", ""},
     .extensions = {".pl", ""},
     .executable = "perl",
     .inline_flag = "-e",
     .version_probe = "printf(\"Perl %vd\\n\", $^V);\n",
     .reserves_address_space = false},
};

// The table's entry for `language`.
[[nodiscard]] const InterpreterSpec& interpreter_spec(Language language);

// The executable name for a language: "sh", "bash", "python3", "node", "perl".
[[nodiscard]] std::string_view interpreter_name(Language language);

// The language a file name's extension implies (".py", ".js", ...), if any.
[[nodiscard]] std::optional<Language> language_of_file(std::string_view path);

// Finds the interpreter on `search_path` (a PATH-style list) below `root` (the sandbox's
// view of the filesystem; "/" for the host). Returns the path as seen inside `root`.
[[nodiscard]] Result<std::filesystem::path> find_interpreter(
    Language language, std::string_view search_path = kSandboxPath,
    const std::filesystem::path& root = "/");

// argv to run `code` in `language` with its interpreter: `[interp, flag, code]` ("-c", "-e")
// when the code fits in one argument (Linux caps one argv string at 128 KiB), else
// `[interp, code_file]` and *needs_file is set: the caller writes the code to `code_file`
// first.
[[nodiscard]] std::vector<std::string> interpreter_argv(Language language,
                                                        const std::filesystem::path& interpreter,
                                                        const std::string& code,
                                                        const std::filesystem::path& code_file,
                                                        bool* needs_file);

}  // namespace cordon
