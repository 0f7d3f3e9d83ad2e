#include "schema_check.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace cordon::cli {
namespace {

using nlohmann::json;

constexpr std::size_t kShownChars = 40;  // of a value quoted in a message

std::string field(const std::string& path) { return path.empty() ? "arguments" : path; }

std::string child(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

Status mismatch(const std::string& path, const std::string& what) {
  return fail(ErrorCode::kInvalidArgument, field(path) + ": " + what);
}

// "a string", "null", "an array": what came, as a sentence says it.
std::string kind_of(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "the number " + shown_value(value);
    default:
      return "something else";
  }
}

bool has_type(const json& value, std::string_view type) {
  if (type == "null") return value.is_null();
  if (type == "boolean") return value.is_boolean();
  if (type == "string") return value.is_string();
  if (type == "array") return value.is_array();
  if (type == "object") return value.is_object();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    if (value.is_number_integer()) return true;
    if (!value.is_number_float()) return false;
    const double d = value.get<double>();
    return d == static_cast<double>(static_cast<long long>(d));
  }
  return false;  // a type name the subset does not know matches nothing
}

// "a number or null", "one of sh, bash, python".
std::string joined(const std::vector<std::string>& items, std::string_view last_word) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " " + std::string(last_word) + " " : ", ";
    out += items[i];
  }
  return out;
}

std::string article(const std::string& type) {
  if (type == "null") return "null";
  if (type == "array" || type == "object" || type == "integer") return "an " + type;
  return "a " + type;
}

// Whether a property's schema lets null stand for "the default" (["x", "null"]).
bool allows_null(const json& schema) {
  const auto type = schema.find("type");
  if (type == schema.end()) return false;
  if (type->is_string()) return type->get<std::string>() == "null";
  return type->is_array() && std::ranges::find(*type, json("null")) != type->end();
}

Status check_type(const json& value, const json& schema, const std::string& path) {
  const auto type = schema.find("type");
  if (type == schema.end()) return {};
  std::vector<std::string> allowed;
  if (type->is_string()) allowed.push_back(type->get<std::string>());
  if (type->is_array()) {
    for (const json& t : *type) {
      if (t.is_string()) allowed.push_back(t.get<std::string>());
    }
  }
  if (std::ranges::any_of(allowed, [&](const std::string& t) { return has_type(value, t); })) {
    return {};
  }
  std::vector<std::string> shown;
  shown.reserve(allowed.size());
  for (const std::string& t : allowed) shown.push_back(article(t));
  return mismatch(path, "must be " + joined(shown, "or") + "; got " + kind_of(value));
}

Status check_enum(const json& value, const json& schema, const std::string& path) {
  const auto values = schema.find("enum");
  if (values == schema.end() || !values->is_array()) return {};
  if (std::ranges::find(*values, value) != values->end()) return {};
  std::vector<std::string> shown;
  for (const json& v : *values) shown.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  return mismatch(path, "must be one of " + joined(shown, "or") + "; got " + shown_value(value));
}

// A count keyword (maxLength, maxItems): a non-negative integer, however the schema's
// JSON was built (parsed numbers are unsigned, literals in code signed).
std::optional<std::size_t> count_keyword(const json& schema, const char* name) {
  const auto v = schema.find(name);
  if (v == schema.end() || !v->is_number_integer() || v->get<std::int64_t>() < 0) {
    return std::nullopt;
  }
  return v->get<std::size_t>();
}

// Unicode code points, as JSON Schema counts a string's length.
std::size_t code_points(std::string_view s) {
  return static_cast<std::size_t>(std::ranges::count_if(
      s, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

Status check_string(const json& value, const json& schema, const std::string& path) {
  const std::optional<std::size_t> most = count_keyword(schema, "maxLength");
  if (!most) return {};
  const std::size_t length = code_points(value.get_ref<const std::string&>());
  if (length <= *most) return {};
  return mismatch(path, "must be at most " + std::to_string(*most) + " characters long; got " +
                            std::to_string(length));
}

Status check_number(const json& value, const json& schema, const std::string& path) {
  const double v = value.get<double>();
  if (const auto low = schema.find("minimum"); low != schema.end() && low->is_number()) {
    if (v < low->get<double>()) {
      return mismatch(path, "must be at least " + low->dump() + "; got " + shown_value(value));
    }
  }
  if (const auto high = schema.find("maximum"); high != schema.end() && high->is_number()) {
    if (v > high->get<double>()) {
      return mismatch(path, "must be at most " + high->dump() + "; got " + shown_value(value));
    }
  }
  return {};
}

Status check_array(const json& value, const json& schema, const std::string& path) {
  if (const std::optional<std::size_t> most = count_keyword(schema, "maxItems")) {
    if (value.size() > *most) {
      return mismatch(path, "must have at most " + std::to_string(*most) + " items; got " +
                                std::to_string(value.size()));
    }
  }
  const auto items = schema.find("items");
  if (items == schema.end() || !items->is_object()) return {};
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (Status s = check_schema(value[i], *items, field(path) + "[" + std::to_string(i) + "]");
        !s) {
      return s;
    }
  }
  return {};
}

Status check_object(const json& value, const json& schema, const std::string& path) {
  const auto properties = schema.find("properties");
  const bool has_properties = properties != schema.end() && properties->is_object();
  if (const auto required = schema.find("required");
      required != schema.end() && required->is_array()) {
    for (const json& name : *required) {
      if (!name.is_string() || value.contains(name.get<std::string>())) continue;
      std::string hint;
      if (has_properties) {
        const auto p = properties->find(name.get<std::string>());
        if (p != properties->end() && allows_null(*p)) hint = " (null is accepted)";
      }
      return mismatch(child(path, name.get<std::string>()), "missing: it is required" + hint);
    }
  }
  const auto extra = schema.find("additionalProperties");
  if (extra != schema.end() && extra->is_boolean() && !extra->get<bool>()) {
    for (const auto& [name, v] : value.items()) {
      if (has_properties && properties->contains(name)) continue;
      std::vector<std::string> known;
      if (has_properties) {
        for (const auto& [k, p] : properties->items()) known.push_back(k);
      }
      return mismatch(child(path, name),
                      "unknown property; the properties are " + joined(known, "and"));
    }
  }
  if (!has_properties) return {};
  for (const auto& [name, property] : properties->items()) {
    const auto v = value.find(name);
    if (v == value.end() || !property.is_object()) continue;
    if (Status s = check_schema(*v, property, child(path, name)); !s) return s;
  }
  return {};
}

}  // namespace

std::string shown_value(const json& value) {
  // Never a dump of a structure: it can be nested thousands deep and megabytes long.
  if (value.is_array()) return "an array of " + std::to_string(value.size()) + " items";
  if (value.is_object()) return "an object";
  std::string text =
      value.dump(/*indent=*/-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
  if (code_points(text) <= kShownChars) return text;
  // Cut at a character boundary, never inside a UTF-8 sequence.
  std::size_t cut = 0;
  std::size_t seen = 0;
  while (cut < text.size() && seen < kShownChars) {
    ++cut;
    while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) ++cut;
    ++seen;
  }
  text.resize(cut);
  return text + "…" + (value.is_string() ? "\"" : "");
}

Status check_schema(const json& value, const json& schema, const std::string& path) {
  if (!schema.is_object()) return {};
  if (Status s = check_type(value, schema, path); !s) return s;
  if (value.is_object()) return check_object(value, schema, path);
  if (value.is_array()) return check_array(value, schema, path);
  if (Status s = check_enum(value, schema, path); !s) return s;
  if (value.is_string()) return check_string(value, schema, path);
  if (value.is_number()) return check_number(value, schema, path);
  return {};
}

}  // namespace cordon::cli
