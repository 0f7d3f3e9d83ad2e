// Randomness and the bearer token of `cordon mcp --http`: where it is kept, how it is
// made and written (mode 0600, never printed).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "cordon/error.h"
#include "cordon/random_hex.h"
#include "mcp/transports.h"

namespace cordon::cli::mcp {

using cordon::random_hex;

// $XDG_STATE_HOME/cordon/mcp-token, else ~/.local/state/cordon/mcp-token.
[[nodiscard]] Result<std::filesystem::path> default_token_path();

// The token the server requires: options.token if given; else the one in the token file
// when options.reuse_token_file and the file holds one; else a new random token (32
// bytes, hex) written to the token file (mode 0600, in a directory made 0700, replaced
// atomically). `wrote_to` is set to the file written, if any.
[[nodiscard]] Result<std::string> resolve_token(const HttpOptions& options,
                                                std::filesystem::path& wrote_to);

}  // namespace cordon::cli::mcp
