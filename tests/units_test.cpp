#include "cordon/units.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace cordon {
namespace {

using std::chrono::milliseconds;

struct DurationCase {
  const char* text;
  std::int64_t ms;
};

// Readable test names in CTest ("# GetParam() = 500ms -> 500").
void PrintTo(const DurationCase& c, std::ostream* os) { *os << c.text << " = " << c.ms << "ms"; }

class ParseDurationGood : public testing::TestWithParam<DurationCase> {};

TEST_P(ParseDurationGood, Parses) {
  const auto& c = GetParam();
  auto parsed = parse_duration(c.text);
  ASSERT_TRUE(parsed) << c.text << ": " << parsed.error().describe();
  EXPECT_EQ(parsed->count(), c.ms) << c.text;
}

INSTANTIATE_TEST_SUITE_P(Table, ParseDurationGood,
                         testing::Values(DurationCase{"500ms", 500}, DurationCase{"0.5s", 500},
                                         DurationCase{"2s", 2000}, DurationCase{"1m", 60'000},
                                         DurationCase{"1min", 60'000},
                                         DurationCase{"1h", 3'600'000}, DurationCase{"2", 2000},
                                         DurationCase{"0.25", 250}, DurationCase{".5", 500},
                                         DurationCase{"0", 0}, DurationCase{"-1", -1000},
                                         DurationCase{"-0.5s", -500}, DurationCase{"+3s", 3000},
                                         DurationCase{"1.5m", 90'000}, DurationCase{"5 s", 5000},
                                         DurationCase{"-0.0004s", 0}, DurationCase{"1.0005s", 1001},
                                         DurationCase{"0.001s", 1}, DurationCase{"1ms", 1},
                                         DurationCase{"0.1234567890123456789999s", 123},
                                         DurationCase{"007s", 7000}));

class ParseDurationBad : public testing::TestWithParam<const char*> {};

TEST_P(ParseDurationBad, Rejects) {
  auto parsed = parse_duration(GetParam());
  ASSERT_FALSE(parsed) << GetParam() << " parsed as " << parsed->count();
  EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(parsed.error().message.empty());
}

INSTANTIATE_TEST_SUITE_P(Table, ParseDurationBad,
                         testing::Values("", "s", "ms", "5x", "5 x", "abc", ".", "-", "--1", "1..5",
                                         "1e3", " 5", "5s ", "5S", "1d",
                                         "99999999999999999999",  // overflows 64 bits
                                         "9999999999999h",        // overflows the clock
                                         "1.5.s"));

// A positive duration under 1 ms would round to 0 ms, which means "the default" for a
// timeout: "-t 0.0001" silently became 5 s. Refused, with the shortest duration named.
class ParseDurationBelowOneMs : public testing::TestWithParam<const char*> {};

TEST_P(ParseDurationBelowOneMs, IsRefusedNamingTheShortest) {
  auto parsed = parse_duration(GetParam());
  ASSERT_FALSE(parsed) << GetParam() << " parsed as " << parsed->count() << " ms";
  EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(parsed.error().message.find("1 ms"), std::string::npos) << parsed.error().message;
}

INSTANTIATE_TEST_SUITE_P(Table, ParseDurationBelowOneMs,
                         testing::Values("0.0001", "0.0004s", "0.0009s", "0.5ms", "0.00001m",
                                         "0.0000000000000000000001s"));

struct SizeCase {
  const char* text;
  std::uint64_t bytes;
};

void PrintTo(const SizeCase& c, std::ostream* os) { *os << c.text << " = " << c.bytes; }

class ParseSizeGood : public testing::TestWithParam<SizeCase> {};

TEST_P(ParseSizeGood, Parses) {
  const auto& c = GetParam();
  auto parsed = parse_size(c.text);
  ASSERT_TRUE(parsed) << c.text << ": " << parsed.error().describe();
  EXPECT_EQ(*parsed, c.bytes) << c.text;
}

INSTANTIATE_TEST_SUITE_P(
    Table, ParseSizeGood,
    testing::Values(SizeCase{"1024", 1024}, SizeCase{"0", 0}, SizeCase{"64k", 64 << 10},
                    SizeCase{"64K", 64 << 10}, SizeCase{"256M", 256u << 20},
                    SizeCase{"1G", 1u << 30}, SizeCase{"1MiB", 1u << 20},
                    SizeCase{"2GB", 2ull << 30}, SizeCase{"1gib", 1u << 30}, SizeCase{"12B", 12},
                    SizeCase{"1.5K", 1536}, SizeCase{"0.5M", 512u << 10}, SizeCase{"1.0", 1},
                    SizeCase{"3 MiB", 3u << 20}, SizeCase{"2T", 2ull << 40},
                    SizeCase{"18446744073709551615", 18446744073709551615ull}));

class ParseSizeBad : public testing::TestWithParam<const char*> {};

TEST_P(ParseSizeBad, Rejects) {
  auto parsed = parse_size(GetParam());
  ASSERT_FALSE(parsed) << GetParam() << " parsed as " << *parsed;
  EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Table, ParseSizeBad,
                         testing::Values("", "-1", "-1K", "1.5", "0.3K", "K", "1X", "1KX", "1 iB",
                                         "1Mi", "18446744073709551616", "16E", "17179869184G",
                                         "abc", "1e6", ".", "15.999999999999999999T"));

TEST(FormatSize, Readable) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(12), "12 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(1024), "1 KiB");
  EXPECT_EQ(format_size(1536), "1.5 KiB");
  EXPECT_EQ(format_size(256u << 20), "256 MiB");
  EXPECT_EQ(format_size(1u << 30), "1 GiB");
  EXPECT_EQ(format_size((1u << 20) - 1), "1 MiB");  // rounds up into the next unit
  EXPECT_EQ(format_size(18446744073709551615ull), "16 EiB");
}

TEST(FormatDuration, Readable) {
  EXPECT_EQ(format_duration(milliseconds(0)), "0 ms");
  EXPECT_EQ(format_duration(milliseconds(200)), "200 ms");
  EXPECT_EQ(format_duration(milliseconds(5000)), "5 s");
  EXPECT_EQ(format_duration(milliseconds(1500)), "1.5 s");
  EXPECT_EQ(format_duration(milliseconds(1250)), "1.25 s");
  EXPECT_EQ(format_duration(milliseconds(1001)), "1.001 s");
  EXPECT_EQ(format_duration(milliseconds(90'000)), "90 s");
  EXPECT_EQ(format_duration(milliseconds(120'000)), "2 min");
  EXPECT_EQ(format_duration(milliseconds(7'200'000)), "2 h");
  EXPECT_EQ(format_duration(milliseconds(-1000)), "-1 s");
}

TEST(FormatDuration, RoundTripsThroughParse) {
  for (std::int64_t ms : {0, 1, 999, 1000, 1234, 59'999, 60'000, 61'000, 3'600'000, 5'400'000}) {
    const std::string text = format_duration(milliseconds(ms));
    auto parsed = parse_duration(text);
    ASSERT_TRUE(parsed) << text;
    EXPECT_EQ(parsed->count(), ms) << text;
  }
}

}  // namespace
}  // namespace cordon
