// Addresses as the allow-list reads them (issue #16): strict parsing (no reading an address
// two ways) and the classes a name may never lead to.
#include <gtest/gtest.h>

#include <string>

#include "cordon/net/address.h"

namespace cordon::net {
namespace {

AddressClass class_of(const std::string& text) {
  const auto address = IpAddress::parse(text);
  EXPECT_TRUE(address.has_value()) << text;
  return address ? classify(*address) : AddressClass::kReserved;
}

TEST(NetAddress, ParsesDottedQuadsAndIpv6) {
  const auto four = IpAddress::parse("192.0.2.10");
  ASSERT_TRUE(four);
  EXPECT_FALSE(four->v6);
  EXPECT_EQ(four->to_string(), "192.0.2.10");
  const auto six = IpAddress::parse("[2001:DB8::1]");
  ASSERT_TRUE(six);
  EXPECT_TRUE(six->v6);
  EXPECT_EQ(six->to_string(), "2001:db8::1");
  EXPECT_EQ(IpAddress::parse("::ffff:10.0.0.1")->to_string(), "::ffff:10.0.0.1");
}

// Forms some resolvers and libc functions accept and read as another address.
TEST(NetAddress, RefusesAmbiguousAndMalformedForms) {
  for (const char* text :
       {"127.1", "0177.0.0.1", "0x7f.0.0.1", "2130706433", "1.2.3.4.5", "1.2.3", "256.1.1.1",
        "01.2.3.4", "1.2.3.4 ", " 1.2.3.4", "", "[", "[]", "[1.2.3.4]", "fe80::1%eth0",
        "::ffff:1.2.3", "1:2:3:4:5:6:7:8:9", "localhost", "-1.2.3.4"}) {
    EXPECT_FALSE(IpAddress::parse(text).has_value()) << text;
  }
}

TEST(NetAddress, ClassesOfIpv4) {
  EXPECT_EQ(class_of("8.8.8.8"), AddressClass::kPublic);
  EXPECT_EQ(class_of("151.101.0.223"), AddressClass::kPublic);
  EXPECT_EQ(class_of("127.0.0.1"), AddressClass::kLoopback);
  EXPECT_EQ(class_of("127.255.255.255"), AddressClass::kLoopback);
  EXPECT_EQ(class_of("10.0.0.1"), AddressClass::kPrivate);
  EXPECT_EQ(class_of("172.16.0.1"), AddressClass::kPrivate);
  EXPECT_EQ(class_of("172.31.255.255"), AddressClass::kPrivate);
  EXPECT_EQ(class_of("172.32.0.1"), AddressClass::kPublic);
  EXPECT_EQ(class_of("172.15.255.255"), AddressClass::kPublic);
  EXPECT_EQ(class_of("192.168.1.1"), AddressClass::kPrivate);
  EXPECT_EQ(class_of("100.64.0.1"), AddressClass::kPrivate);
  EXPECT_EQ(class_of("100.128.0.1"), AddressClass::kPublic);
  EXPECT_EQ(class_of("169.254.1.1"), AddressClass::kLinkLocal);
  EXPECT_EQ(class_of("169.254.169.254"), AddressClass::kMetadata);
  EXPECT_EQ(class_of("169.254.170.2"), AddressClass::kMetadata);
  EXPECT_EQ(class_of("100.100.100.200"), AddressClass::kMetadata);
  EXPECT_EQ(class_of("0.0.0.0"), AddressClass::kUnspecified);
  EXPECT_EQ(class_of("0.1.2.3"), AddressClass::kUnspecified);
  EXPECT_EQ(class_of("224.0.0.1"), AddressClass::kMulticast);
  EXPECT_EQ(class_of("255.255.255.255"), AddressClass::kReserved);
  EXPECT_EQ(class_of("198.18.0.1"), AddressClass::kReserved);
  EXPECT_EQ(class_of("198.19.255.255"), AddressClass::kReserved);
  EXPECT_EQ(class_of("198.20.0.1"), AddressClass::kPublic);
  EXPECT_EQ(class_of("192.0.2.1"), AddressClass::kReserved);
}

TEST(NetAddress, ClassesOfIpv6) {
  EXPECT_EQ(class_of("2606:4700::1111"), AddressClass::kPublic);
  EXPECT_EQ(class_of("::1"), AddressClass::kLoopback);
  EXPECT_EQ(class_of("::"), AddressClass::kUnspecified);
  EXPECT_EQ(class_of("fe80::1"), AddressClass::kLinkLocal);
  EXPECT_EQ(class_of("febf::1"), AddressClass::kLinkLocal);
  EXPECT_EQ(class_of("fc00::1"), AddressClass::kUniqueLocal);
  EXPECT_EQ(class_of("fd12:3456::1"), AddressClass::kUniqueLocal);
  EXPECT_EQ(class_of("fd00:ec2::254"), AddressClass::kMetadata);
  EXPECT_EQ(class_of("ff02::1"), AddressClass::kMulticast);
  EXPECT_EQ(class_of("2001:db8::1"), AddressClass::kReserved);
  EXPECT_EQ(class_of("2002:a00:1::1"), AddressClass::kReserved);  // 6to4 of 10.0.0.1
  EXPECT_EQ(class_of("::10.0.0.1"), AddressClass::kReserved);     // IPv4-compatible
  EXPECT_EQ(class_of("4000::1"), AddressClass::kReserved);        // outside 2000::/3
}

// The kernel connects ::ffff:127.0.0.1 to 127.0.0.1: the class is the inner address's.
TEST(NetAddress, MappedAndNat64AddressesAreTheirIpv4) {
  EXPECT_EQ(class_of("::ffff:127.0.0.1"), AddressClass::kLoopback);
  EXPECT_EQ(class_of("::ffff:169.254.169.254"), AddressClass::kMetadata);
  EXPECT_EQ(class_of("::ffff:8.8.8.8"), AddressClass::kPublic);
  EXPECT_EQ(class_of("64:ff9b::a00:1"), AddressClass::kPrivate);
  EXPECT_EQ(IpAddress::parse("::ffff:10.1.2.3")->embedded_v4()->to_string(), "10.1.2.3");
  EXPECT_FALSE(IpAddress::parse("2001:db8::1")->embedded_v4().has_value());
  EXPECT_FALSE(IpAddress::parse("10.1.2.3")->embedded_v4().has_value());
}

TEST(NetAddress, EndpointsBracketIpv6Hosts) {
  EXPECT_EQ(format_endpoint("pypi.org", 443), "pypi.org:443");
  EXPECT_EQ(format_endpoint("10.0.0.1", 80), "10.0.0.1:80");
  EXPECT_EQ(format_endpoint("2001:db8::1", 8443), "[2001:db8::1]:8443");
}

TEST(NetAddress, WithinComparesPrefixBits) {
  const IpAddress a = *IpAddress::parse("10.1.2.3");
  EXPECT_TRUE(a.within(*IpAddress::parse("10.0.0.0"), 8));
  EXPECT_TRUE(a.within(*IpAddress::parse("10.1.2.0"), 23));
  EXPECT_FALSE(a.within(*IpAddress::parse("10.1.4.0"), 23));
  EXPECT_TRUE(a.within(*IpAddress::parse("10.1.2.3"), 32));
  EXPECT_FALSE(a.within(*IpAddress::parse("::"), 0));  // another family never matches
}

}  // namespace
}  // namespace cordon::net
