// Files built into a library (cmake/embed.cmake): the audit catalogue here, the tool
// description templates in prompts/ (prompts/embedded.h). They travel with the binary,
// so what runs is what was reviewed.
#pragma once

#include <span>
#include <string_view>

namespace cordon::audit {

struct EmbeddedFile {
  std::string_view path;  // relative to the source tree: "audit/catalogue.json"
  std::string_view text;
};

[[nodiscard]] std::span<const EmbeddedFile> embedded_catalogue_files();

}  // namespace cordon::audit
