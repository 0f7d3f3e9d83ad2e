// `cordon run`'s options as typed (cli/request_builder.h): each input line is one option,
// its first byte choosing which (t --timeout, m --memory, p --processes, c --cpu,
// o --output-cap, i --max-input-size, l --language, e --env, g --collect,
// d --tool-description, f --file spec, x -c CODE). No file is read: --file specs go
// through parse_input_file_spec only, and the code is always -c.
// Properties: build_request never throws; what it accepts passes validate(), keeps every
// --env as NAME=VALUE split at the first '=' and every --collect glob as given; a
// parsed --file spec round-trips through "LOCAL:NAME".
#include <cstdint>
#include <string>
#include <string_view>

#include "cordon/request.h"
#include "fuzz_util.h"
#include "prompt_command.h"
#include "request_builder.h"
#include "run_options.h"

namespace {

using namespace cordon;
using cordon::fuzz::require;

void check_file_spec(std::string_view spec) {
  const Result<cli::InputFileSpec> parsed = cli::parse_input_file_spec(spec);
  if (!parsed) return;
  require(!parsed->local.empty() && !parsed->name.empty());
  require(parsed->name.find(':') == std::string::npos);
  const Result<cli::InputFileSpec> again =
      cli::parse_input_file_spec(parsed->local + ":" + parsed->name);
  require(again.has_value() && again->local == parsed->local && again->name == parsed->name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  cli::RunOptions options;
  options.code = "true";
  for (const std::string& line : fuzz::lines(bytes)) {
    if (line.empty()) continue;
    std::string value = line.substr(1);
    switch (line[0]) {
      case 't':
        options.timeout = value;
        break;
      case 'm':
        options.memory = value;
        break;
      case 'p':
        options.processes = value;
        break;
      case 'c':
        options.cpu = value;
        break;
      case 'o':
        options.output_cap = value;
        break;
      case 'i':
        options.max_input_size = value;
        break;
      case 'l':
        options.language = value;
        break;
      case 'e':
        options.env.push_back(value);
        break;
      case 'g':
        options.collect.push_back(value);
        break;
      case 'd':
        (void)frontend::parse_tool_description_ref(value);
        options.tool_description = value;
        break;
      case 'f':
        check_file_spec(value);
        break;
      case 'x':
        options.code = value;
        break;
      default:
        break;
    }
  }
  const Result<RunRequest> request = cli::build_request(options, /*stdin_fd=*/-1);
  if (!request) {
    require(!request.error().message.empty());
    return 0;
  }
  require(validate(*request).has_value());
  require(request->env.size() == options.env.size());
  for (std::size_t i = 0; i < options.env.size(); ++i) {
    const auto& [name, value] = request->env[i];
    require(name.find('=') == std::string::npos);
    require(name + "=" + value == options.env[i]);
  }
  require(request->artifact_globs == options.collect);
  if (request->limits.cpu_time) require(request->limits.cpu_time->count() > 0);
  return 0;
}
