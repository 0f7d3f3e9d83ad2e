// The network allow-list's decisions (issue #16): each entry form, ports, deny over allow,
// names that resolve where they must not (DNS rebinding), address literals.
#include "cordon/net/net_policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cordon::net {
namespace {

NetPolicy policy(const std::vector<std::string>& allow, const std::vector<std::string>& deny = {}) {
  auto made = NetPolicy::make(allow, deny);
  EXPECT_TRUE(made.has_value()) << made.error().describe();
  return made ? *made : NetPolicy{};
}

IpAddress ip(const char* text) { return *IpAddress::parse(text); }

TEST(NetPolicy, EachEntryFormIsReadToItsCanonicalText) {
  const NetPolicy p =
      policy({"PyPI.org.", "*.PythonHosted.org", "api.test:8443", "10.1.2.3/16", "192.0.2.7",
              "192.0.2.8:22", "2001:DB8::1", "[2001:db8::2]:443", "fd00::/64"});
  EXPECT_EQ(p.allow_entries(),
            (std::vector<std::string>{"pypi.org", "*.pythonhosted.org", "api.test:8443",
                                      "10.1.0.0/16", "192.0.2.7", "192.0.2.8:22", "2001:db8::1",
                                      "[2001:db8::2]:443", "fd00::/64"}));
}

TEST(NetPolicy, MalformedEntriesAreRefusedWithTheReason) {
  struct Case {
    const char* entry;
    const char* why;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"", "empty"},
           {"*", "allow everything"},
           {"*.com", "*.TLD"},
           {"0.0.0.0/0", "too much"},
           {"::/0", "too much"},
           {"10.0.0.0/7", "too much"},
           {"fd00::/15", "too much"},
           {"10.0.0.0/33", "longer than the address"},
           {"10.0.0.0/x", "ADDRESS/BITS"},
           {"pypi.org:0", "port"},
           {"pypi.org:65536", "port"},
           {"pypi.org:http", "port"},
           {"pypi.org:080", "port"},
           {"2001:db8::1:443x", "[ADDRESS]:PORT"},
           {"[2001:db8::1]:", "port"},
           {"[pypi.org]:443", "IPv6"},
           {"[::1", "']'"},
           {"py pi.org", "spaces"},
           {"pypi..org", "not a domain name"},
           {"-pypi.org", "not a domain name"},
           {"pypi_org.com", "not a domain name"},
           {"127.1", "not a domain name"},
           {"*.-x.org", "after '*.'"},
           {"a.*.org", "not a domain name"},
       }) {
    const auto made = NetPolicy::make({c.entry}, {});
    ASSERT_FALSE(made.has_value()) << c.entry;
    EXPECT_NE(made.error().message.find(c.why), std::string::npos)
        << c.entry << ": " << made.error().message;
    EXPECT_NE(made.error().message.find(std::string("'") + c.entry + "'"), std::string::npos)
        << made.error().message;
  }
  EXPECT_FALSE(NetPolicy::make({"pypi.org"}, {"*"}).has_value());  // deny entries too
}

TEST(NetPolicy, AnEmptyListAllowsNothing) {
  const NetPolicy p = policy({});
  EXPECT_TRUE(p.empty());
  const Decision d = p.check_target("pypi.org", 443);
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.why.find("no network"), std::string::npos);
  EXPECT_FALSE(p.check_address("pypi.org", 443, ip("151.101.0.223")).allowed);
}

TEST(NetPolicy, ANameEntryIsThatNameOnPorts80And443) {
  const NetPolicy p = policy({"pypi.org"});
  EXPECT_TRUE(p.check_target("pypi.org", 443).allowed);
  EXPECT_TRUE(p.check_target("PYPI.ORG.", 80).allowed);
  EXPECT_EQ(p.check_target("pypi.org", 443).why, "allowed by pypi.org");
  const Decision other_port = p.check_target("pypi.org", 22);
  EXPECT_FALSE(other_port.allowed);
  EXPECT_NE(other_port.why.find("allows ports 80 and 443; add pypi.org:22"), std::string::npos)
      << other_port.why;
  EXPECT_FALSE(p.check_target("www.pypi.org", 443).allowed);  // not the subdomains
  EXPECT_FALSE(p.check_target("pypi.org.evil.test", 443).allowed);
  EXPECT_FALSE(p.check_target("evilpypi.org", 443).allowed);
}

TEST(NetPolicy, AWildcardIsEverySubdomainButNotTheApex) {
  const NetPolicy p = policy({"*.pythonhosted.org"});
  EXPECT_TRUE(p.check_target("files.pythonhosted.org", 443).allowed);
  EXPECT_TRUE(p.check_target("a.b.pythonhosted.org", 443).allowed);
  EXPECT_FALSE(p.check_target("pythonhosted.org", 443).allowed);
  EXPECT_FALSE(p.check_target("evilpythonhosted.org", 443).allowed);
}

TEST(NetPolicy, APortEntryIsThatPortOnly) {
  const NetPolicy p = policy({"api.test:8443"});
  EXPECT_TRUE(p.check_target("api.test", 8443).allowed);
  EXPECT_FALSE(p.check_target("api.test", 443).allowed);
}

TEST(NetPolicy, ADenyEntryWinsOnEveryPort) {
  const NetPolicy p = policy({"*.pypi.org", "10.0.0.0/8"}, {"evil.pypi.org", "10.6.6.6"});
  const Decision d = p.check_target("evil.pypi.org", 443);
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.why.find("denied by --deny-net evil.pypi.org"), std::string::npos) << d.why;
  EXPECT_TRUE(p.check_target("good.pypi.org", 443).allowed);
  EXPECT_FALSE(p.check_target("10.6.6.6", 8080).allowed);
  EXPECT_TRUE(p.check_target("10.6.6.7", 8080).allowed);
  // A name allowed whose address is denied.
  EXPECT_FALSE(p.check_address("good.pypi.org", 443, ip("10.6.6.6")).allowed);
}

TEST(NetPolicy, AnAddressLiteralNeedsAnAddressEntry) {
  const NetPolicy names = policy({"pypi.org"});
  const Decision d = names.check_target("151.101.0.223", 443);
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.why.find("only an address or CIDR entry allows an address"), std::string::npos);
  const NetPolicy addresses = policy({"151.101.0.0/16", "[2a04:4e42::223]:443"});
  EXPECT_TRUE(addresses.check_target("151.101.0.223", 443).allowed);
  EXPECT_TRUE(addresses.check_address("151.101.0.223", 443, ip("151.101.0.223")).allowed);
  EXPECT_TRUE(addresses.check_target("[2a04:4e42::223]", 443).allowed);
  EXPECT_TRUE(addresses.check_target("2a04:4e42::223", 443).allowed);
  EXPECT_FALSE(addresses.check_target("2a04:4e42::223", 80).allowed);
  EXPECT_FALSE(addresses.check_target("151.102.0.1", 443).allowed);
}

// DNS rebinding: a name on the list that resolves to an address the code must not reach.
TEST(NetPolicy, ANameNeverLeadsToANonPublicAddressUnlessItIsListed) {
  const NetPolicy p = policy({"api.example.org"});
  ASSERT_TRUE(p.check_target("api.example.org", 443).allowed);
  EXPECT_TRUE(p.check_address("api.example.org", 443, ip("151.101.0.223")).allowed);
  for (const char* address :
       {"127.0.0.1", "10.0.0.5", "172.20.0.1", "192.168.0.10", "169.254.169.254", "169.254.1.1",
        "100.100.100.200", "0.0.0.0", "::1", "fe80::1", "fd00:ec2::254", "fc00::5",
        "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::7f00:1", "198.18.0.1",
        "224.0.0.1"}) {
    const Decision d = p.check_address("api.example.org", 443, ip(address));
    EXPECT_FALSE(d.allowed) << address;
    EXPECT_NE(d.why.find("resolved to"), std::string::npos) << d.why;
  }
  const Decision meta = p.check_address("api.example.org", 443, ip("169.254.169.254"));
  EXPECT_NE(meta.why.find("cloud metadata"), std::string::npos) << meta.why;
}

TEST(NetPolicy, AListedAddressLetsANameLeadThere) {
  const NetPolicy p = policy({"api.test:8080", "198.18.0.0/15"});
  const Decision d = p.check_address("api.test", 8080, ip("198.18.0.7"));
  EXPECT_TRUE(d.allowed) << d.why;
  EXPECT_EQ(d.why, "allowed by api.test:8080; its address 198.18.0.7 by 198.18.0.0/15");
  EXPECT_FALSE(p.check_address("api.test", 8080, ip("127.0.0.1")).allowed);
  // A mapped form of a listed address is the listed address.
  EXPECT_TRUE(p.check_address("api.test", 8080, ip("::ffff:198.18.0.7")).allowed);
}

TEST(NetPolicy, NotAHostNameIsDenied) {
  const NetPolicy p = policy({"pypi.org"});
  for (const char* host : {"", "pypi.org/x", "py pi.org", "127.1", "0x7f.1"}) {
    EXPECT_FALSE(p.check_target(host, 443).allowed) << host;
  }
  EXPECT_FALSE(p.check_target("pypi.org", 0).allowed);
}

TEST(NetPolicy, CanonicalTextIsTheSameWhateverTheOrderAndSpelling) {
  const NetPolicy a = policy({"PyPI.org", "10.1.2.3/16"}, {"x.pypi.org"});
  const NetPolicy b = policy({"10.1.0.0/16", "pypi.org.", "pypi.org"}, {"X.PYPI.ORG"});
  EXPECT_EQ(a.canonical(), b.canonical());
  EXPECT_EQ(a.canonical(), "allow=10.1.0.0/16,pypi.org;deny=x.pypi.org");
  EXPECT_NE(a.canonical(), policy({"pypi.org"}).canonical());
}

}  // namespace
}  // namespace cordon::net
