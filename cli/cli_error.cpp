#include "cli_error.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "frontend/exit_status.h"
#include "frontend_names.h"

namespace cordon::cli {

int report_failure(std::string_view message, bool json) {
  if (json) {
    const nlohmann::json object = {{"error", std::string(message)}};
    const std::string text = object.dump(/*indent=*/-1, /*indent_char=*/' ', /*ensure_ascii=*/false,
                                         nlohmann::json::error_handler_t::replace);
    std::fprintf(stdout, "%s\n", text.c_str());
    std::fflush(stdout);
  } else {
    std::fprintf(stderr, "cordon: %.*s\n", static_cast<int>(message.size()), message.data());
  }
  return kExitCordonFailed;
}

}  // namespace cordon::cli
