// TEMPORARY until the Streamable HTTP transport lands (cli/mcp/http_server*.cpp).
#include <cstdio>

#include "mcp/transports.h"

namespace cordon::cli::mcp {

int serve_http(Service& /*service*/, const HttpOptions& /*options*/, const CancelToken& /*stop*/) {
  std::fputs("cordon: HTTP transport not built\n", stderr);
  return 125;
}

}  // namespace cordon::cli::mcp
