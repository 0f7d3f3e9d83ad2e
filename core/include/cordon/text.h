// Byte-string helpers: UTF-8 validation with replacement, base64, hex, lists in words.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon {

// Valid UTF-8 as it is; every invalid sequence replaced by U+FFFD (the WHATWG
// "maximal subpart" rule). `lossy` is set when anything was replaced.
[[nodiscard]] std::string to_valid_utf8(std::string_view bytes, bool* lossy = nullptr);

[[nodiscard]] std::string base64_encode(std::string_view bytes);
// Standard base64 (RFC 4648, '+' '/', padded or not); line breaks and spaces are skipped
// (encoders wrap at 76 columns). std::nullopt on any other character, misplaced '=' or
// a dangling final character.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);
[[nodiscard]] std::string hex_encode(std::string_view bytes);
// A-Z to a-z, every other byte as it is (no locale: host names, header names, extensions).
[[nodiscard]] std::string ascii_lower(std::string_view text);
// The pieces of `text` between each `separator`, empty ones included ("a,,b" gives a, "", b;
// "" gives one empty piece): views into `text`.
[[nodiscard]] std::vector<std::string_view> split(std::string_view text, char separator);
// The items with `separator` between them ("a, b, c"); "" for none.
[[nodiscard]] std::string join(const std::vector<std::string>& items,
                               std::string_view separator = ", ");
// `word` as one word of a POSIX shell command line: as it is when every byte is one no shell
// treats specially (letters, digits, and @ % + = : , . / _ -; not empty), else in single
// quotes, a ' inside written '\'' (Python's shlex.quote). For a command to paste.
[[nodiscard]] std::string shell_quote(std::string_view word);

}  // namespace cordon
