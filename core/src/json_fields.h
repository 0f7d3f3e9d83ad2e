// Reading the members of a JSON object someone else wrote (a plugin's answer, cordon's
// request as a plugin reads it): an absent or null member leaves its target as it is, a
// member of another type is an error naming it. The one set of readers of result_json.cpp
// and plugin_wire.cpp. Internal to core.
#pragma once

#include <chrono>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "cordon/json_number.h"

namespace cordon::json_fields {

using nlohmann::json;

[[nodiscard]] inline Error unexpected_value(std::string_view key, const json& value) {
  return Error{ErrorCode::kInvalidArgument, 0,
               "'" + std::string(key) + "' has an unexpected value: " + value.dump()};
}

// The member, when present and not null.
[[nodiscard]] inline const json* member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

inline Status read(const json& object, std::string_view key, std::string& out) {
  const json* value = member(object, key);
  if (value == nullptr) return {};
  if (!value->is_string()) return std::unexpected(unexpected_value(key, *value));
  out = value->get<std::string>();
  return {};
}

inline Status read(const json& object, std::string_view key, std::optional<std::string>& out) {
  std::string value;
  if (member(object, key) == nullptr) return {};
  if (Status s = read(object, key, value); !s) return s;
  out = std::move(value);
  return {};
}

inline Status read(const json& object, std::string_view key, bool& out) {
  const json* value = member(object, key);
  if (value == nullptr) return {};
  if (!value->is_boolean()) return std::unexpected(unexpected_value(key, *value));
  out = value->get<bool>();
  return {};
}

// An integer that fits T (json_integer()), never a float cast or a silent wrap.
template <std::integral T>
Status read(const json& object, std::string_view key, std::optional<T>& out) {
  const json* value = member(object, key);
  if (value == nullptr) return {};
  std::optional<T> read = json_integer<T>(*value);
  if (!read) return std::unexpected(unexpected_value(key, *value));
  out = std::move(read);
  return {};
}

template <std::integral T>
Status read(const json& object, std::string_view key, T& out) {
  std::optional<T> value;
  if (Status s = read(object, key, value); !s) return s;
  if (value) out = *value;
  return {};
}

// Milliseconds, written as an integer.
inline Status read(const json& object, std::string_view key, std::chrono::milliseconds& out) {
  std::optional<std::int64_t> ms;
  if (Status s = read(object, key, ms); !s) return s;
  if (ms) out = std::chrono::milliseconds(*ms);
  return {};
}

// The enumerator of `values` that to_string() spells `text` (an outcome, an aspect, an
// enforcement level, ...).
template <typename Enum, std::size_t N>
[[nodiscard]] std::optional<Enum> enum_named(const Enum (&values)[N], std::string_view text) {
  for (const Enum value : values) {
    if (to_string(value) == text) return value;
  }
  return std::nullopt;
}

// An array of strings.
inline Status read(const json& object, std::string_view key, std::vector<std::string>& out) {
  const json* value = member(object, key);
  if (value == nullptr) return {};
  if (!value->is_array()) return std::unexpected(unexpected_value(key, *value));
  std::vector<std::string> strings;
  for (const json& item : *value) {
    if (!item.is_string()) return std::unexpected(unexpected_value(key, *value));
    strings.push_back(item.get<std::string>());
  }
  out = std::move(strings);
  return {};
}

// The first of `reads` that failed, else success: several members read in one statement.
[[nodiscard]] inline Status first_failure(std::initializer_list<Status> reads) {
  for (const Status& s : reads) {
    if (!s) return s;
  }
  return {};
}

}  // namespace cordon::json_fields
