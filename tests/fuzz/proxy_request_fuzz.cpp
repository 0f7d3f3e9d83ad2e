// What a sandboxed program sends the egress proxy (issue #16): parse_proxy_head over arbitrary
// bytes, whole and in every split a client could send them in. Properties: it never throws;
// a refusal has a status and words; only a head under the size limit asks for more; an
// accepted request names one host and a port, and the same prefix always gives the same
// answer; a plain-HTTP request's head for the target has exactly one Host line, naming the
// host and port the policy judged, and no Proxy-* field; an accepted head is never longer than
// the input.
#include <cstdint>
#include <string>
#include <string_view>

#include "cordon/net/proxy_request.h"
#include "fuzz_util.h"

namespace {

using cordon::fuzz::require;
using cordon::net::kMaxProxyHead;
using cordon::net::parse_proxy_head;
using cordon::net::ProxyHead;
using cordon::net::split_authority;

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return text;
}

void check_upstream_head(const ProxyHead& head) {
  const std::string& up = head.request.upstream_head;
  require(up.size() >= 4 && up.compare(up.size() - 4, 4, "\r\n\r\n") == 0);
  require(up.compare(0, head.request.method.size(), head.request.method) == 0);
  const std::string folded = lower(up);
  require(folded.find("\r\nproxy-") == std::string::npos);
  const std::size_t first = folded.find("\r\nhost:");
  require(first != std::string::npos);
  require(folded.find("\r\nhost:", first + 1) == std::string::npos);
  std::size_t value = first + 7;
  while (value < up.size() && (up[value] == ' ' || up[value] == '\t')) ++value;
  const std::size_t end = up.find("\r\n", value);
  std::string host;
  std::uint16_t port = 0;
  require(split_authority(std::string_view(up).substr(value, end - value), 80, &host, &port));
  require(host == head.request.host && port == head.request.port);
}

void check(std::string_view bytes) {
  const ProxyHead head = parse_proxy_head(bytes);
  switch (head.state) {
    case ProxyHead::State::kNeedMore:
      require(bytes.size() < kMaxProxyHead);
      break;
    case ProxyHead::State::kRefused:
      require(head.status >= 400 && head.status < 600 && !head.why.empty());
      break;
    case ProxyHead::State::kDone: {
      require(head.consumed <= bytes.size() && head.consumed > 0);
      require(!head.request.host.empty() && head.request.port != 0);
      if (!head.request.connect) check_upstream_head(head);
      const ProxyHead again = parse_proxy_head(bytes.substr(0, head.consumed));
      require(again.state == ProxyHead::State::kDone && again.consumed == head.consumed &&
              again.request.host == head.request.host && again.request.port == head.request.port &&
              again.request.upstream_head == head.request.upstream_head);
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check(bytes);
  // The proxy parses again each time more bytes arrive: a split must not change the answer
  // for the whole once it is complete. Check a few prefixes.
  for (std::size_t cut : {size / 3, size / 2, size - size / 4}) {
    if (cut < size) check(bytes.substr(0, cut));
  }
  return 0;
}
