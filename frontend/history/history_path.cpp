// Where the history lives by default (XDG base directory spec) and the opt-out switch.
#include <string>
#include <string_view>

#include "frontend/data_dir.h"
#include "frontend/history.h"

namespace cordon::history {

Result<std::filesystem::path> default_path() {
  if (const std::string_view explicit_path = frontend::env_value(kPathEnv);
      !explicit_path.empty()) {
    return std::filesystem::path(explicit_path);
  }
  const std::optional<std::filesystem::path> data = frontend::data_dir();
  if (!data) {
    return fail(ErrorCode::kNotFound, std::string("no place for the run history: set ") + kPathEnv +
                                          ", XDG_DATA_HOME or HOME");
  }
  return *data / "history.sqlite3";
}

bool disabled_by_env() {
  const std::string_view value = frontend::env_value(kDisableEnv);
  return !value.empty() && value != "0";
}

}  // namespace cordon::history
