// The tool description templates and their manifest, built into cordon::prompts
// (cmake/embed.cmake).
#pragma once

#include <span>

#include "audit/embedded.h"

namespace cordon::prompts {

using audit::EmbeddedFile;

// prompts/<id>/v<N>.json and prompts/manifest.txt, sorted by path.
[[nodiscard]] std::span<const EmbeddedFile> embedded_prompt_files();

}  // namespace cordon::prompts
