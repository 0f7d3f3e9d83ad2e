// {{name}} substitution, shared by the catalogue's code and the tool templates.
#pragma once

#include <map>
#include <string>

#include "cordon/error.h"

namespace cordon::audit {

// `text` with each {{name}} replaced by values[name]; an unknown name is an error that
// names it ("no value for {{name}}").
[[nodiscard]] Result<std::string> fill_placeholders(
    const std::string& text, const std::map<std::string, std::string>& values);

}  // namespace cordon::audit
