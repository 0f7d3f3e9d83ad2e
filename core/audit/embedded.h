// Files built into the library (core/audit/embed.cmake): the catalogue and the tool
// description templates travel with the binary, so what runs is what was reviewed.
#pragma once

#include <span>
#include <string_view>

namespace cordon::audit {

struct EmbeddedFile {
  std::string_view path;  // relative to the source tree: "prompts/run_code/v1.json"
  std::string_view text;
};

[[nodiscard]] std::span<const EmbeddedFile> embedded_catalogue_files();
[[nodiscard]] std::span<const EmbeddedFile> embedded_prompt_files();

}  // namespace cordon::audit
