#include "audit/placeholders.h"

namespace cordon::audit {

Result<std::string> fill_placeholders(const std::string& text,
                                      const std::map<std::string, std::string>& values) {
  std::string out;
  std::size_t at = 0;
  for (;;) {
    const std::size_t open = text.find("{{", at);
    if (open == std::string::npos) break;
    const std::size_t close = text.find("}}", open);
    if (close == std::string::npos) break;
    const std::string name = text.substr(open + 2, close - open - 2);
    const auto it = values.find(name);
    if (it == values.end()) {
      return fail(ErrorCode::kInvalidArgument, "no value for {{" + name + "}}");
    }
    out += text.substr(at, open - at) + it->second;
    at = close + 2;
  }
  return out + text.substr(at);
}

}  // namespace cordon::audit
