// Byte-string helpers: UTF-8 validation with replacement, base64, hex.
#pragma once

#include <string>
#include <string_view>

namespace cordon {

// Valid UTF-8 as it is; every invalid sequence replaced by U+FFFD (the WHATWG
// "maximal subpart" rule). `lossy` is set when anything was replaced.
[[nodiscard]] std::string to_valid_utf8(std::string_view bytes, bool* lossy = nullptr);

[[nodiscard]] std::string base64_encode(std::string_view bytes);
[[nodiscard]] std::string hex_encode(std::string_view bytes);

}  // namespace cordon
