// Checks a JSON value against the subset of JSON Schema the tool templates use
// (prompts/<id>/v<N>.json): type (a name or a list, e.g. ["number", "null"]), enum,
// properties, required, additionalProperties: false, items, minimum/maximum, maxLength,
// maxItems. Other keywords (description, ...) are ignored.
//
// The value is a model's tool-call arguments: the message of a mismatch is written for
// that model to act on. It names the field by its path ("language", "files[0].name") and
// says what was expected and what came: "language: must be one of python, bash, sh; got
// \"cobol\"".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cordon/error.h"

namespace cordon::cli {

// kInvalidArgument at the first mismatch, in a fixed order: type, then (objects)
// required properties, unknown properties, each property in the schema's order, (arrays)
// maxItems then each item, (strings) enum then maxLength, (numbers) enum then
// minimum/maximum. `path` names `value` ("" for the arguments object itself).
[[nodiscard]] Status check_schema(const nlohmann::json& value, const nlohmann::json& schema,
                                  const std::string& path = "");

// A short rendering of a JSON value for a message: strings quoted and cut to a few dozen
// characters, numbers and literals as JSON, arrays and objects only named ("an object").
[[nodiscard]] std::string shown_value(const nlohmann::json& value);

}  // namespace cordon::cli
