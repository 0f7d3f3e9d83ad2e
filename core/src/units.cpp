#include "cordon/units.h"

#include <cstdint>
#include <limits>
#include <string>

namespace cordon {
namespace {

// 128-bit arithmetic keeps "1.5G"-style products exact; __extension__ silences -Wpedantic.
__extension__ using U128 = unsigned __int128;

// A decimal number split exactly: "12.0500" -> whole 12, frac 5, frac_digits 2 (trailing
// zeros dropped). Parsing by hand avoids the rounding of strtod and its locale.
struct Decimal {
  std::uint64_t whole = 0;
  std::uint64_t frac = 0;
  int frac_digits = 0;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// More fraction digits than this carry no meaning for milliseconds or bytes; they are
// checked to be digits and otherwise ignored (durations) or must be zeros (sizes).
constexpr int kMaxFracDigits = 18;

// Parses the leading decimal number of `text` and advances it past the number. Fails on
// an empty number, a lone ".", or a whole part that does not fit 64 bits.
Result<Decimal> take_decimal(std::string_view& text, std::string_view original, bool* dropped) {
  Decimal d;
  std::size_t i = 0;
  bool any_digit = false;
  for (; i < text.size() && is_digit(text[i]); ++i) {
    any_digit = true;
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (__builtin_mul_overflow(d.whole, 10u, &d.whole) ||
        __builtin_add_overflow(d.whole, digit, &d.whole)) {
      return fail(ErrorCode::kInvalidArgument, "number too large: '" + std::string(original) + "'");
    }
  }
  *dropped = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    std::uint64_t frac = 0;
    int digits = 0;
    int zeros = 0;  // pending trailing zeros, only committed when a non-zero digit follows
    for (; i < text.size() && is_digit(text[i]); ++i) {
      any_digit = true;
      const int digit = text[i] - '0';
      if (digit == 0) {
        ++zeros;
        continue;
      }
      if (digits + zeros + 1 > kMaxFracDigits) {
        *dropped = true;
        zeros = 0;
        continue;
      }
      for (; zeros > 0; --zeros, ++digits) frac *= 10;
      frac = frac * 10 + static_cast<std::uint64_t>(digit);
      ++digits;
    }
    d.frac = frac;
    d.frac_digits = digits;
  }
  if (!any_digit) {
    return fail(ErrorCode::kInvalidArgument, "not a number: '" + std::string(original) + "'");
  }
  text.remove_prefix(i);
  return d;
}

U128 pow10(int n) {
  U128 p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

std::string_view skip_spaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

constexpr std::int64_t kMaxDurationMs = kMaxDuration.count();

}  // namespace

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  const std::string_view original = text;
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  bool dropped = false;
  auto number = take_decimal(text, original, &dropped);
  if (!number) return std::unexpected(number.error());
  const std::string_view unit = skip_spaces(text);

  std::uint64_t unit_ms = 0;
  if (unit.empty() || unit == "s" || unit == "sec") {
    unit_ms = 1000;
  } else if (unit == "ms") {
    unit_ms = 1;
  } else if (unit == "m" || unit == "min") {
    unit_ms = 60'000;
  } else if (unit == "h") {
    unit_ms = 3'600'000;
  } else {
    return fail(ErrorCode::kInvalidArgument,
                "bad duration '" + std::string(original) +
                    "': expected a number with an optional unit ms, s, m or h");
  }
  const U128 scale = pow10(number->frac_digits);
  // A positive duration shorter than 1 ms cannot be applied (timers here count whole
  // milliseconds) and must not round to 0, which means "the default" for a timeout: a
  // typo such as "0.0001" would otherwise silently become 5 s.
  const bool nonzero = number->whole != 0 || number->frac != 0 || dropped;
  if (!negative && nonzero && number->whole == 0 &&
      static_cast<U128>(number->frac) * unit_ms < scale) {
    return fail(ErrorCode::kInvalidArgument, "duration '" + std::string(original) +
                                                 "' is shorter than 1 ms, the shortest cordon "
                                                 "can apply");
  }
  // Rounded to the nearest millisecond: "1.0005s" is 1001 ms, "-0.0004s" is 0 ms.

  const U128 total = static_cast<U128>(number->whole) * unit_ms +
                     (static_cast<U128>(number->frac) * unit_ms + scale / 2) / scale;
  if (total > static_cast<U128>(kMaxDurationMs)) {
    return fail(ErrorCode::kInvalidArgument, "duration too large: '" + std::string(original) + "'");
  }
  const auto ms = static_cast<std::int64_t>(total);
  return std::chrono::milliseconds(negative ? -ms : ms);
}

Result<std::uint64_t> parse_size(std::string_view text) {
  const std::string_view original = text;
  if (!text.empty() && text.front() == '-') {
    return fail(ErrorCode::kInvalidArgument,
                "size must not be negative: '" + std::string(original) + "'");
  }
  bool dropped = false;
  auto number = take_decimal(text, original, &dropped);
  if (!number) return std::unexpected(number.error());
  std::string_view unit = skip_spaces(text);

  // An optional "B" or "iB" after the multiplier letter; a bare "B" means bytes.
  int shift = -1;
  if (unit.empty() || iequals(unit, "b")) {
    shift = 0;
  } else {
    static constexpr std::string_view kLetters = "kmgt";
    const auto pos = kLetters.find(lower(unit.front()));
    const std::string_view rest = unit.substr(1);
    if (pos != std::string_view::npos &&
        (rest.empty() || iequals(rest, "b") || iequals(rest, "ib"))) {
      shift = 10 * static_cast<int>(pos + 1);
    }
  }
  if (shift < 0) {
    return fail(ErrorCode::kInvalidArgument,
                "bad size '" + std::string(original) +
                    "': expected bytes or a number with K, M, G or T (binary multiples)");
  }
  const U128 multiplier = static_cast<U128>(1) << shift;
  const U128 scale = pow10(number->frac_digits);
  const U128 frac_bytes = static_cast<U128>(number->frac) * multiplier;
  if (dropped || frac_bytes % scale != 0) {
    return fail(ErrorCode::kInvalidArgument,
                "size '" + std::string(original) + "' is not a whole number of bytes");
  }
  const U128 total = static_cast<U128>(number->whole) * multiplier + frac_bytes / scale;
  if (total > std::numeric_limits<std::uint64_t>::max()) {
    return fail(ErrorCode::kInvalidArgument, "size too large: '" + std::string(original) + "'");
  }
  return static_cast<std::uint64_t>(total);
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  std::size_t unit = 0;
  U128 divisor = 1;
  while (unit + 1 < std::size(kUnits) && bytes >= divisor * 1024) {
    divisor *= 1024;
    ++unit;
  }
  // Tenths, rounded; "1023.96 KiB" would print as "1024 KiB", so move up a unit then.
  U128 tenths = (static_cast<U128>(bytes) * 10 + divisor / 2) / divisor;
  if (tenths >= 10240 && unit + 1 < std::size(kUnits)) {
    divisor *= 1024;
    ++unit;
    tenths = (static_cast<U128>(bytes) * 10 + divisor / 2) / divisor;
  }
  std::string out = std::to_string(static_cast<std::uint64_t>(tenths / 10));
  if (const auto tenth = static_cast<unsigned>(tenths % 10); tenth != 0) {
    out += '.';
    out += static_cast<char>('0' + tenth);
  }
  out += ' ';
  out += kUnits[unit];
  return out;
}

std::string format_duration(std::chrono::milliseconds d) {
  const std::int64_t raw = d.count();
  if (raw < 0) {
    // Negating INT64_MIN would overflow; such a duration is only ever a bug's output.
    if (raw == std::numeric_limits<std::int64_t>::min()) return "-inf";
    return "-" + format_duration(std::chrono::milliseconds(-raw));
  }
  if (raw < 1000) return std::to_string(raw) + " ms";
  if (raw % 3'600'000 == 0) return std::to_string(raw / 3'600'000) + " h";
  if (raw % 60'000 == 0) return std::to_string(raw / 60'000) + " min";
  // Seconds with the milliseconds that are there: "1.5 s", "1.25 s", "90 s".
  std::string out = std::to_string(raw / 1000);
  if (std::int64_t ms = raw % 1000; ms != 0) {
    std::string frac = std::to_string(ms);
    frac.insert(0, 3 - frac.size(), '0');
    while (frac.back() == '0') frac.pop_back();
    out += '.' + frac;
  }
  return out + " s";
}

}  // namespace cordon
