// Token and Origin/Host checks of the HTTP transport (see http_auth.h).
#include "mcp/http_auth.h"

#include <algorithm>
#include <cctype>

#include "cordon/text.h"
#include "mcp/transports.h"

namespace cordon::cli::mcp {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// "host:port" with an IPv6 host in brackets, as it appears in URLs and Host headers.
std::string authority(std::string_view host, int port) {
  const bool v6 = host.find(':') != std::string_view::npos;
  return (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

}  // namespace

bool bearer_token_matches(std::string_view authorization, std::string_view token) {
  authorization = trim(authorization);
  constexpr std::string_view kScheme = "bearer";
  if (token.empty() || authorization.size() <= kScheme.size() ||
      ascii_lower(authorization.substr(0, kScheme.size())) != kScheme ||
      (authorization[kScheme.size()] != ' ' && authorization[kScheme.size()] != '\t')) {
    return false;
  }
  const std::string_view given = trim(authorization.substr(kScheme.size()));
  // Constant time in the content: every byte of the expected token is looked at whatever
  // the given one holds. Only the length can leak, and a token is 64 hex digits anyway.
  unsigned diff = given.size() == token.size() ? 0u : 1u;
  for (std::size_t i = 0; i < token.size(); ++i) {
    const auto a = static_cast<unsigned char>(i < given.size() ? given[i] : 0);
    diff |= a ^ static_cast<unsigned char>(token[i]);
  }
  return diff == 0;
}

OriginPolicy::OriginPolicy(std::string_view host, int port,
                           const std::vector<std::string>& extra_origins) {
  std::vector<std::string> names = {"127.0.0.1", "localhost", "::1"};
  const bool wildcard = host == "0.0.0.0" || host == "::";
  if (!wildcard && std::ranges::find(names, ascii_lower(host)) == names.end()) {
    names.push_back(ascii_lower(host));
  }
  for (const auto& name : names) {
    hosts_.push_back(authority(name, port));
    origins_.push_back("http://" + authority(name, port));
  }
  for (const auto& origin : extra_origins) {
    std::string_view value = trim(origin);
    while (value.ends_with('/')) value.remove_suffix(1);
    origins_.push_back(ascii_lower(value));
  }
  check_host_ = is_loopback_host(host);
}

bool OriginPolicy::origin_allowed(std::string_view origin) const {
  return std::ranges::find(origins_, ascii_lower(trim(origin))) != origins_.end();
}

bool OriginPolicy::host_allowed(std::string_view host_header) const {
  if (!check_host_) return true;
  return std::ranges::find(hosts_, ascii_lower(trim(host_header))) != hosts_.end();
}

}  // namespace cordon::cli::mcp
