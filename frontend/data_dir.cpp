#include "frontend/data_dir.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace cordon::frontend {
std::string_view env_value(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read at start-up
  return value != nullptr ? value : "";
}

std::optional<std::filesystem::path> data_dir() {
  if (const std::string_view data_home = env_value("XDG_DATA_HOME");
      !data_home.empty() && data_home.front() == '/') {
    return std::filesystem::path(data_home) / "cordon";
  }
  std::string_view home = env_value("HOME");
  if (home.empty()) {
    const passwd* entry = ::getpwuid(::getuid());  // NOLINT(concurrency-mt-unsafe)
    if (entry != nullptr && entry->pw_dir != nullptr) home = entry->pw_dir;
  }
  if (home.empty()) return std::nullopt;
  return std::filesystem::path(home) / ".local" / "share" / "cordon";
}

}  // namespace cordon::frontend
