// The egress proxy's reading of a request head (issue #16): what it lets through is one target
// the policy can judge; everything that could point the proxy at a second host is refused.
#include <gtest/gtest.h>

#include <string>

#include "cordon/net/proxy_request.h"

namespace cordon::net {
namespace {

using State = ProxyHead::State;

TEST(ProxyRequest, ConnectNamesHostAndPort) {
  const std::string text = "CONNECT PyPI.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\nTLS...";
  const ProxyHead head = parse_proxy_head(text);
  ASSERT_EQ(head.state, State::kDone) << head.why;
  EXPECT_TRUE(head.request.connect);
  EXPECT_EQ(head.request.host, "pypi.org");
  EXPECT_EQ(head.request.port, 443);
  EXPECT_EQ(text.substr(head.consumed), "TLS...");
}

TEST(ProxyRequest, ConnectToAnIpv6LiteralDropsTheBrackets) {
  const ProxyHead head = parse_proxy_head("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n");
  ASSERT_EQ(head.state, State::kDone) << head.why;
  EXPECT_EQ(head.request.host, "2001:db8::1");
  EXPECT_EQ(head.request.port, 8443);
}

TEST(ProxyRequest, AnIncompleteHeadAsksForMore) {
  EXPECT_EQ(parse_proxy_head("CONNECT a.test:443 HTTP/1.1\r\nHost: a").state, State::kNeedMore);
  EXPECT_EQ(parse_proxy_head("").state, State::kNeedMore);
}

TEST(ProxyRequest, ConnectWithoutAPortOrWithUserInfoIsRefused) {
  for (const char* target : {"a.test", "a.test:", "a.test:0", "a.test:65536", "a.test:x",
                             "u@a.test:443", "[::1", "a/b:443", ""}) {
    const ProxyHead head = parse_proxy_head(std::string("CONNECT ") + target + " HTTP/1.1\r\n\r\n");
    EXPECT_EQ(head.state, State::kRefused) << target;
    EXPECT_EQ(head.status, 400) << target;
  }
}

TEST(ProxyRequest, PlainHttpIsRewrittenToOriginFormForItsTarget) {
  const std::string text =
      "GET http://Docs.Python.org/3/index.html?q=1#top HTTP/1.1\r\nHost: docs.python.org\r\n"
      "Proxy-Authorization: Basic eDp5\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n";
  const ProxyHead head = parse_proxy_head(text);
  ASSERT_EQ(head.state, State::kDone) << head.why;
  EXPECT_FALSE(head.request.connect);
  EXPECT_EQ(head.request.method, "GET");
  EXPECT_EQ(head.request.host, "docs.python.org");
  EXPECT_EQ(head.request.port, 80);
  const std::string& up = head.request.upstream_head;
  EXPECT_EQ(up.rfind("GET /3/index.html?q=1 HTTP/1.1\r\n", 0), 0U) << up;
  EXPECT_NE(up.find("Host: docs.python.org\r\n"), std::string::npos) << up;
  EXPECT_NE(up.find("Accept: */*\r\n"), std::string::npos) << up;
  EXPECT_NE(up.find("Connection: close\r\n"), std::string::npos) << up;
  EXPECT_EQ(up.find("Proxy-"), std::string::npos) << up;
  EXPECT_EQ(up.substr(up.size() - 4), "\r\n\r\n");
  EXPECT_EQ(head.consumed, text.size());
}

TEST(ProxyRequest, PlainHttpWithoutHostOrPathGetsBoth) {
  const ProxyHead head = parse_proxy_head("GET http://a.test:8080 HTTP/1.0\r\n\r\n");
  ASSERT_EQ(head.state, State::kDone) << head.why;
  EXPECT_EQ(head.request.port, 8080);
  EXPECT_EQ(head.request.upstream_head.rfind("GET / HTTP/1.0\r\n", 0), 0U);
  EXPECT_NE(head.request.upstream_head.find("Host: a.test:8080\r\n"), std::string::npos);
}

TEST(ProxyRequest, ABodyAfterTheHeadIsLeftForTheTarget) {
  const std::string text =
      "POST http://a.test/upload HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n\r\nhello";
  const ProxyHead head = parse_proxy_head(text);
  ASSERT_EQ(head.state, State::kDone) << head.why;
  EXPECT_EQ(text.substr(head.consumed), "hello");
  EXPECT_NE(head.request.upstream_head.find("Content-Length: 5\r\n"), std::string::npos);
}

TEST(ProxyRequest, TwoHostHeadersAreRefused) {
  const ProxyHead head = parse_proxy_head(
      "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: metadata.internal\r\n\r\n");
  ASSERT_EQ(head.state, State::kRefused);
  EXPECT_EQ(head.status, 400);
  EXPECT_NE(head.why.find("more than one Host"), std::string::npos) << head.why;
}

TEST(ProxyRequest, AHostHeaderNamingAnotherHostIsRefused) {
  for (const char* host : {"b.test", "a.test:81", "a.test.evil"}) {
    const ProxyHead head =
        parse_proxy_head(std::string("GET http://a.test/ HTTP/1.1\r\nHost: ") + host + "\r\n\r\n");
    EXPECT_EQ(head.state, State::kRefused) << host;
    EXPECT_NE(head.why.find("another host"), std::string::npos) << head.why;
  }
  EXPECT_EQ(parse_proxy_head("GET http://a.test/ HTTP/1.1\r\nHost: A.test:80\r\n\r\n").state,
            State::kDone);
}

TEST(ProxyRequest, OtherSchemesOriginFormAndUserInfoAreRefused) {
  for (const char* line :
       {"GET https://a.test/ HTTP/1.1", "GET ftp://a.test/ HTTP/1.1", "GET / HTTP/1.1",
        "GET http://user:pw@a.test/ HTTP/1.1", "GET http://a.test:99999/ HTTP/1.1",
        "GET http://a%2etest/ HTTP/1.1", "GET http:///x HTTP/1.1"}) {
    const ProxyHead head = parse_proxy_head(std::string(line) + "\r\nHost: a.test\r\n\r\n");
    EXPECT_EQ(head.state, State::kRefused) << line;
    EXPECT_EQ(head.status, 400) << line;
    EXPECT_FALSE(head.why.empty()) << line;
  }
}

TEST(ProxyRequest, MalformedAndOversizedHeadsAreRefused) {
  EXPECT_EQ(parse_proxy_head("NOT HTTP AT ALL\r\n\r\n").state, State::kRefused);
  EXPECT_EQ(parse_proxy_head("GET http://a.test/ HTTP/2.0\r\n\r\n").state, State::kRefused);
  const std::string big = "GET http://a.test/ HTTP/1.1\r\nX: " + std::string(20000, 'a');
  const ProxyHead head = parse_proxy_head(big);
  ASSERT_EQ(head.state, State::kRefused);
  EXPECT_EQ(head.status, 431);
}

TEST(ProxyRequest, EveryProxyFieldStaysWithTheProxy) {
  const ProxyHead head = parse_proxy_head(
      "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nPROXY-Token: s3cret\r\n\r\n");
  ASSERT_EQ(head.state, State::kDone) << head.why;
  EXPECT_EQ(head.request.upstream_head.find("s3cret"), std::string::npos);
}

// Request smuggling's usual lever: two framings of one body. Beast refuses it, and so must we.
TEST(ProxyRequest, ContentLengthWithChunkedIsRefused) {
  const ProxyHead head = parse_proxy_head(
      "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n"
      "Content-Length: 3\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(head.state, State::kRefused);
  EXPECT_EQ(head.status, 400);
}

TEST(ProxyRequest, SplitAuthorityForms) {
  std::string host;
  std::uint16_t port = 0;
  ASSERT_TRUE(split_authority("Example.COM", 80, &host, &port));
  EXPECT_EQ(host, "example.com");
  EXPECT_EQ(port, 80);
  ASSERT_TRUE(split_authority("[::1]:8080", 80, &host, &port));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 8080);
  EXPECT_FALSE(split_authority("::1", 80, &host, &port));  // a v6 literal needs brackets
  EXPECT_FALSE(split_authority("[::1]x", 80, &host, &port));
  EXPECT_FALSE(split_authority("a b:80", 80, &host, &port));
}

}  // namespace
}  // namespace cordon::net
