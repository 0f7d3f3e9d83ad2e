// The kernel program built into cordon::core (cmake/embed.cmake): what runs is what was
// reviewed, and no file has to be found at run time.
#pragma once

#include <span>
#include <string_view>

namespace cordon::session_kernel_detail {

struct EmbeddedFile {
  std::string_view path;  // "core/src/session_kernel/kernel.py"
  std::string_view text;
};

[[nodiscard]] std::span<const EmbeddedFile> embedded_kernel_files();

}  // namespace cordon::session_kernel_detail
