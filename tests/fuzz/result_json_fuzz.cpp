// The Result JSON reader: result_figure() reads the figures (cpu_ms, max_rss_kb, ...) of a
// Result JSON of any schema version, e.g. one read back from a history file, which any
// process of the user could have written. The bytes are parsed as JSON and every figure
// is read. Properties: it never throws; a figure stored as an integer that fits int64
// reads back as itself (schema 1's unmeasured max_rss_kb 0 excepted), a missing or
// non-numeric one as "not measured".
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cordon/result_json.h"
#include "fuzz_util.h"

namespace {

using cordon::fuzz::require;
using nlohmann::json;

constexpr std::string_view kFigures[] = {"cpu_ms",         "max_rss_kb",   "memory_peak_kb",
                                         "wall_ms",        "exit_code",    "signal",
                                         "schema_version", "stdout_bytes", ""};

void check(const json& result) {
  for (const std::string_view field : kFigures) {
    const std::optional<std::int64_t> figure = cordon::result_figure(result, field);
    if (!result.is_object()) {
      require(!figure.has_value());
      continue;
    }
    const auto found = result.find(field);
    if (found == result.end() || !found->is_number()) {
      require(!figure.has_value());
    } else if (found->is_number_integer() &&
               (found->is_number_unsigned()
                    ? found->get<std::uint64_t>() <= std::uint64_t{INT64_MAX}
                    : true) &&
               !(field == "max_rss_kb" && found->get<std::int64_t>() == 0)) {
      require(figure.has_value() && *figure == found->get<std::int64_t>());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const json result = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (result.is_discarded()) return 0;
  check(result);
  if (result.is_object()) {  // each member alone, as a nested reader would see it
    for (const auto& [key, value] : result.items()) check(value);
  }
  return 0;
}
