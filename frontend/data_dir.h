// Where cordon keeps its data by default (the XDG base directory spec), for the run
// history and the environment store alike.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace cordon::frontend {

// The value of the environment variable `name`, "" when unset. Read at start-up.
[[nodiscard]] std::string_view env_value(const char* name);

// $XDG_DATA_HOME/cordon (absolute values only: the spec says a relative one is invalid and
// must be ignored), else ~/.local/share/cordon ($HOME, else the passwd entry); nullopt when
// there is no home either. Read at start-up: getenv and getpwuid are not thread-safe.
[[nodiscard]] std::optional<std::filesystem::path> data_dir();

}  // namespace cordon::frontend
