#include "cordon/text.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace cordon {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at the start of `s` (1..4), or 0 when it is
// invalid; then *subpart is the length of its maximal subpart (>= 1), the bytes the one
// U+FFFD replaces. Table 3-7 of the Unicode standard: the second byte's range depends on
// the lead byte (no overlongs, no surrogates, nothing above U+10FFFF).
std::size_t valid_sequence(std::string_view s, std::size_t* subpart) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
  const std::uint8_t lead = byte(0);
  std::size_t need = 0;
  std::uint8_t lo = 0x80;
  std::uint8_t hi = 0xBF;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    *subpart = 1;  // 80..C1, F5..FF can never start a sequence
    return 0;
  }
  std::size_t i = 1;
  for (; i <= need && i < s.size(); ++i) {
    const std::uint8_t b = byte(i);
    if (b < lo || b > hi) break;
    lo = 0x80;  // only the second byte has a narrowed range
    hi = 0xBF;
  }
  if (i == need + 1) return i;
  *subpart = i;
  return 0;
}

}  // namespace

std::string to_valid_utf8(std::string_view bytes, bool* lossy) {
  std::string out;
  out.reserve(bytes.size());
  bool replaced = false;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    // Copy runs of ASCII at once: almost all program output is ASCII.
    std::size_t run = pos;
    while (run < bytes.size() && static_cast<std::uint8_t>(bytes[run]) < 0x80) ++run;
    out.append(bytes, pos, run - pos);
    pos = run;
    if (pos == bytes.size()) break;
    std::size_t subpart = 0;
    const std::size_t len = valid_sequence(bytes.substr(pos), &subpart);
    if (len != 0) {
      out.append(bytes, pos, len);
      pos += len;
    } else {
      out += kReplacement;
      pos += subpart;
      replaced = true;
    }
  }
  if (lossy) *lossy = replaced;
  return out;
}

std::string base64_encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  const auto at = [&](std::size_t k) {
    return static_cast<std::uint32_t>(static_cast<std::uint8_t>(bytes[k]));
  };
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = at(i) << 16 | at(i + 1) << 8 | at(i + 2);
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += kAlphabet[v >> 6 & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const std::uint32_t v = at(i) << 16;
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += "==";
  } else if (rest == 2) {
    const std::uint32_t v = at(i) << 16 | at(i + 1) << 8;
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += kAlphabet[v >> 6 & 63];
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3 + 3);
  std::uint32_t bits = 0;
  int count = 0;    // sextets in `bits`
  int padding = 0;  // '=' seen: only more '=' and whitespace may follow
  for (const char c : text) {
    int v = -1;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    else if (c == '\n' || c == '\r' || c == ' ' || c == '\t')
      continue;
    else if (c == '=') {
      ++padding;
      continue;
    } else {
      return std::nullopt;
    }
    if (padding > 0) return std::nullopt;
    bits = bits << 6 | static_cast<std::uint32_t>(v);
    if (++count == 4) {
      out += static_cast<char>(bits >> 16 & 0xff);
      out += static_cast<char>(bits >> 8 & 0xff);
      out += static_cast<char>(bits & 0xff);
      bits = 0;
      count = 0;
    }
  }
  // A final group of 1 sextet holds no whole byte; padding, when given, fills the group.
  if (count == 1 || padding > 2 || (padding > 0 && count + padding != 4)) return std::nullopt;
  if (count == 2) out += static_cast<char>(bits >> 4 & 0xff);
  if (count == 3) {
    out += static_cast<char>(bits >> 10 & 0xff);
    out += static_cast<char>(bits >> 2 & 0xff);
  }
  return out;
}

std::string hex_encode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto b = static_cast<std::uint8_t>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      out.push_back(text.substr(start));
      return out;
    }
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;  // by position: an empty first item keeps its separator
    out += items[i];
  }
  return out;
}

std::string shell_quote(std::string_view word) {
  // ASCII only, whatever the locale: a byte past 0x7f is quoted.
  const auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
  };
  if (!word.empty() && std::ranges::all_of(word, plain)) return std::string(word);
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace cordon
