// Bytes as what a client of `cordon mcp --http` controls before the session sees it: the
// Authorization, Origin, Host, Accept and Content-Type header values, the POST body's
// first look (cli/mcp/http_auth.h, http_message.h), and as the --http ADDR:PORT argument.
// None may crash or throw, and each keeps its promise: a token is only accepted when the
// header carries exactly it, a parsed address has a port in range and a host that parses
// again the same way.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "mcp/http_auth.h"
#include "mcp/http_message.h"
#include "mcp/transports.h"

namespace {

using namespace cordon::cli::mcp;

void require(bool ok) {
  if (!ok) std::abort();  // the standalone main and libFuzzer both report an abort
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  constexpr std::string_view kToken = "0123456789abcdef";
  if (bearer_token_matches(text, kToken)) require(text.find(kToken) != std::string_view::npos);
  require(!bearer_token_matches(text, ""));

  static const OriginPolicy policy("127.0.0.1", 8080, {"https://app.example"});
  if (policy.origin_allowed(text)) require(size <= 64);
  (void)policy.host_allowed(text);

  const AcceptedFormats formats = accepted_formats(text);
  if (text.empty()) require(formats.json);
  (void)is_json_content_type(text);

  const PostBody body = inspect_post_body(text);
  if (body.initialize) require(body.json && !body.batch && body.request_ids.size() == 1);
  if (!body.json) require(body.request_ids.empty() && !body.batch);

  if (const auto parsed = parse_listen_address(text)) {
    require(parsed->second >= 0 && parsed->second <= 65535);
    const bool v6 = parsed->first.find(':') != std::string::npos;
    const std::string again =
        (v6 ? "[" + parsed->first + "]" : parsed->first) + ":" + std::to_string(parsed->second);
    const auto reparsed = parse_listen_address(again);
    require(reparsed && *reparsed == *parsed);
    (void)is_loopback_host(parsed->first);
  }
  return 0;
}
