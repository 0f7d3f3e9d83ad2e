#include "cordon/interpreter.h"

#include <sys/stat.h>

#include <string>

#include "cordon/rooted_path.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

// Linux caps one argv string at MAX_ARG_STRLEN = 32 pages = 128 KiB, counting its NUL.
// The margin keeps clear of the edge (and of kernels with a different page size).
constexpr std::size_t kMaxArgBytes = 128 * 1024;
constexpr std::size_t kArgMargin = 4 * 1024;

bool is_executable_file(const fs::path& path) {
  struct stat st{};
  // stat, not lstat: /usr/bin/python3 is a symlink to python3.11 on Debian.
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0;
}

}  // namespace

const InterpreterSpec& interpreter_spec(Language language) {
  for (const InterpreterSpec& spec : kInterpreters) {
    if (spec.language == language) return spec;
  }
  return kInterpreters[2];  // sh; unreachable: every Language has an entry (interpreter_test)
}

std::string_view interpreter_name(Language language) {
  return interpreter_spec(language).executable;
}

std::optional<Language> language_of_file(std::string_view path) {
  const std::string extension = fs::path(path).extension().string();
  if (extension.empty()) return std::nullopt;
  for (const InterpreterSpec& spec : kInterpreters) {
    for (const std::string_view e : spec.extensions) {
      if (!e.empty() && e == extension) return spec.language;
    }
  }
  return std::nullopt;
}

Result<fs::path> find_interpreter(Language language, std::string_view search_path,
                                  const fs::path& root) {
  const std::string_view name = interpreter_name(language);
  for (std::string_view rest = search_path;;) {
    const auto colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    // An empty or relative entry means "relative to the cwd" to a shell: never wanted
    // for finding the interpreter of untrusted code.
    if (!dir.empty() && dir.front() == '/') {
      fs::path inside = fs::path(dir) / name;
      // Resolved below `root`: an environment's symlink with an absolute target must not
      // lead to the host's file of that name.
      if (auto host = resolve_below(root, inside); host && is_executable_file(*host)) {
        return inside;
      }
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return fail(ErrorCode::kNotFound, std::string(name) + " not found on " +
                                        std::string(search_path) +
                                        (root == "/" ? "" : " below " + root.string()));
}

std::vector<std::string> interpreter_argv(Language language, const fs::path& interpreter,
                                          const std::string& code, const fs::path& code_file,
                                          bool* needs_file) {
  // A NUL cannot travel in an argv string (it would cut the code short), so such code
  // goes through the file too.
  const bool file =
      code.size() + 1 > kMaxArgBytes - kArgMargin || code.find('\0') != std::string::npos;
  if (needs_file) *needs_file = file;
  if (file) return {interpreter.string(), code_file.string()};
  return {interpreter.string(), std::string(interpreter_spec(language).inline_flag), code};
}

}  // namespace cordon
