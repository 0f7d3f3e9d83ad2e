// Integers read from JSON that anyone could have written (a history row, a stored audit
// report, a catalogue or template file, a policy). nlohmann's get<T>() of a float outside
// T's range is undefined behaviour (a float-to-integer cast), and of a larger integer a
// silent wrap (tests/fuzz/ feeds such numbers). These read a number only when it
// is an integer that fits T; anything else is std::nullopt, for the caller to refuse or
// skip.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cordon/error.h"

namespace cordon {

// `value` as a T when it is a JSON integer in T's range, or a float with an integral value
// in T's range (1e3 is 1000); else std::nullopt.
template <std::integral T>
[[nodiscard]] std::optional<T> json_integer(const nlohmann::json& value) {
  using Range = std::numeric_limits<T>;
  if (value.is_number_unsigned()) {
    const std::uint64_t u = value.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(Range::max())) return std::nullopt;
    return static_cast<T>(u);
  }
  if (value.is_number_integer()) {
    const std::int64_t i = value.get<std::int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (i < 0 || static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(Range::max())) {
        return std::nullopt;
      }
    } else {
      if (i < static_cast<std::int64_t>(Range::min()) ||
          i > static_cast<std::int64_t>(Range::max())) {
        return std::nullopt;
      }
    }
    return static_cast<T>(i);
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    // Range::max() + 1 is a power of two, exact as a double; max() itself may not be.
    const double above = std::ldexp(1.0, Range::digits);
    const auto lowest = static_cast<double>(Range::min());
    if (!std::isfinite(d) || std::trunc(d) != d || d < lowest || d >= above) return std::nullopt;
    return static_cast<T>(d);
  }
  return std::nullopt;
}

// The member `key` of `object` as a T (json_integer()), or `fallback` when it is absent;
// an error naming `key` when it is present but not such an integer.
template <std::integral T>
[[nodiscard]] Result<T> json_integer_member(const nlohmann::json& object, const char* key,
                                            std::optional<T> fallback = std::nullopt) {
  const auto found = object.is_object() ? object.find(key) : object.end();
  if (!object.is_object() || found == object.end()) {
    if (fallback) return *fallback;
    return fail(ErrorCode::kInvalidArgument, std::string("missing integer '") + key + "'");
  }
  if (const std::optional<T> v = json_integer<T>(*found)) return *v;
  return fail(ErrorCode::kInvalidArgument,
              std::string("'") + key + "' is not an integer in range: " + found->dump());
}

}  // namespace cordon
