// Where the history lives by default (XDG base directory spec) and the opt-out switch.
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "frontend/history.h"

namespace cordon::history {
namespace {

std::string_view env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read at start-up
  return value != nullptr ? value : "";
}

}  // namespace

Result<std::filesystem::path> default_path() {
  if (const std::string_view explicit_path = env(kPathEnv); !explicit_path.empty()) {
    return std::filesystem::path(explicit_path);
  }
  // The spec says a relative $XDG_DATA_HOME is invalid and must be ignored.
  if (const std::string_view data_home = env("XDG_DATA_HOME");
      !data_home.empty() && data_home.front() == '/') {
    return std::filesystem::path(data_home) / "cordon" / "history.sqlite3";
  }
  std::string_view home = env("HOME");
  if (home.empty()) {
    const passwd* entry = ::getpwuid(::getuid());  // NOLINT(concurrency-mt-unsafe)
    if (entry != nullptr && entry->pw_dir != nullptr) home = entry->pw_dir;
  }
  if (home.empty()) {
    return fail(ErrorCode::kNotFound, std::string("no place for the run history: set ") + kPathEnv +
                                          ", XDG_DATA_HOME or HOME");
  }
  return std::filesystem::path(home) / ".local" / "share" / "cordon" / "history.sqlite3";
}

bool disabled_by_env() {
  const std::string_view value = env(kDisableEnv);
  return !value.empty() && value != "0";
}

}  // namespace cordon::history
