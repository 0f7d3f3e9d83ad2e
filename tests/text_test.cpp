#include "cordon/text.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "shell_words.h"

namespace cordon {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

struct Utf8Case {
  std::string input;
  std::string expected;
  bool lossy;
};

void PrintTo(const Utf8Case& c, std::ostream* os) { *os << testing::PrintToString(c.input); }

class ToValidUtf8 : public testing::TestWithParam<Utf8Case> {};

TEST_P(ToValidUtf8, Replaces) {
  const auto& c = GetParam();
  bool lossy = !c.lossy;
  EXPECT_EQ(to_valid_utf8(c.input, &lossy), c.expected) << testing::PrintToString(c.input);
  EXPECT_EQ(lossy, c.lossy);
}

// Cases from the Unicode standard's "U+FFFD Substitution of Maximal Subparts" (the
// WHATWG decoder's rule): one U+FFFD per maximal subpart of an ill-formed sequence.
INSTANTIATE_TEST_SUITE_P(
    Table, ToValidUtf8,
    testing::Values(
        Utf8Case{"", "", false}, Utf8Case{"hello\n", "hello\n", false},
        Utf8Case{std::string("a\0b", 3), std::string("a\0b", 3), false},
        Utf8Case{"\xC3\xA9", "\xC3\xA9", false},                  // é
        Utf8Case{"\xE2\x82\xAC", "\xE2\x82\xAC", false},          // €
        Utf8Case{"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80", false},  // 😀
        Utf8Case{"\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF", false},  // U+10FFFF
        Utf8Case{"\x80", kFffd, true},                            // lone continuation
        Utf8Case{"\xFF", kFffd, true},
        Utf8Case{"a\xFE"
                 "b",
                 "a" + kFffd + "b", true},
        Utf8Case{"\xC0\xAF", kFffd + kFffd, true},              // overlong: C0 never leads
        Utf8Case{"\xE0\x80\xAF", kFffd + kFffd + kFffd, true},  // overlong 3-byte
        Utf8Case{"\xED\xA0\x80", kFffd + kFffd + kFffd, true},  // surrogate D800
        Utf8Case{"\xF4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd, true},  // > U+10FFFF
        Utf8Case{"\xE2\x82", kFffd, true},                                  // truncated at the end
        Utf8Case{"\xE2\x82"
                 "a",
                 kFffd + "a", true},            // truncated mid-stream
        Utf8Case{"\xF0\x9F\x98", kFffd, true},  // 3 of 4 bytes: one FFFD
        Utf8Case{"\xF0\x9F\x98\xF0\x9F\x98\x80", kFffd + "\xF0\x9F\x98\x80", true},
        Utf8Case{"\xC3"
                 "\xC3\xA9",
                 kFffd + "\xC3\xA9", true},
        // The standard's example: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64
        Utf8Case{"\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64",
                 "a" + kFffd + kFffd + kFffd + "b" + kFffd + "c" + kFffd + kFffd + "d", true}));

TEST(ToValidUtf8, EveryByteValueGivesValidOutput) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  bool lossy = false;
  const std::string out = to_valid_utf8(all, &lossy);
  EXPECT_TRUE(lossy);
  bool again = true;
  EXPECT_EQ(to_valid_utf8(out, &again), out);  // idempotent: the output is valid
  EXPECT_FALSE(again);
}

TEST(ToValidUtf8, NullLossyPointerIsAllowed) { EXPECT_EQ(to_valid_utf8("\xFF"), kFffd); }

TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode(std::string("\xFB\xFF\x00", 3)), "+/8A");
}

TEST(Base64, DecodesWhatItEncodesAndRefusesTheRest) {
  for (const std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    EXPECT_EQ(base64_decode(base64_encode(s)), s);
  }
  EXPECT_EQ(base64_decode("+/8A"), std::string("\xFB\xFF\x00", 3));
  EXPECT_EQ(base64_decode("Zm8"), "fo");                 // padding is optional
  EXPECT_EQ(base64_decode("Zm9v\nYmFy\r\n"), "foobar");  // wrapped lines
  for (const char* bad : {"Z", "Zm9vY", "Zg=a", "Z===", "Zm9v*", "Zg=", "-_8A"}) {
    EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
  }
}

TEST(Hex, LowerCase) {
  EXPECT_EQ(hex_encode(""), "");
  EXPECT_EQ(hex_encode(std::string("\x00\x01\xAB\xFF", 4)), "0001abff");
}

// Host names, header names and extensions are compared in ASCII, whatever the locale (the
// inspector sets one): bytes outside A-Z stay as they are.
TEST(AsciiLower, LowersOnlyAToZ) {
  EXPECT_EQ(ascii_lower("PyPI.Org:443"), "pypi.org:443");
  EXPECT_EQ(ascii_lower("\xC4\xD6-_@[]"), "\xC4\xD6-_@[]");
  EXPECT_EQ(ascii_lower(""), "");
}

TEST(Join, PutsTheSeparatorOnlyBetweenItems) {
  EXPECT_EQ(join({}), "");
  EXPECT_EQ(join({"a"}), "a");
  EXPECT_EQ(join({"a", "", "c"}), "a, , c");
  EXPECT_EQ(join({"", "b"}), ", b");
  EXPECT_EQ(join({"x", "y"}, " | "), "x | y");
}

TEST(Split, KeepsEmptyPiecesAtEitherEndAndBetween) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(split("", ','), V{""});
  EXPECT_EQ(split("a", ','), V{"a"});
  EXPECT_EQ(split("a,b", ','), (V{"a", "b"}));
  EXPECT_EQ(split("a,,b", ','), (V{"a", "", "b"}));
  EXPECT_EQ(split(",a,", ','), (V{"", "a", ""}));
  EXPECT_EQ(split("x y", ','), V{"x y"});
}

// A word quoted by shell_quote() is that one word to a POSIX shell, whatever it holds; a
// plain one stays as it is, so commands stay readable.
TEST(ShellQuote, EveryWordIsOneWordToTheShell) {
  EXPECT_EQ(shell_quote("namespace"), "namespace");
  EXPECT_EQ(shell_quote("127.0.0.2:9"), "127.0.0.2:9");
  EXPECT_EQ(shell_quote("10.9.0.0/16"), "10.9.0.0/16");
  EXPECT_EQ(shell_quote("*.pythonhosted.org"), "'*.pythonhosted.org'");
  EXPECT_EQ(shell_quote("container (runsc)"), "'container (runsc)'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  const std::vector<std::string> words = {"*.pythonhosted.org",
                                          "[2001:db8::1]:443",
                                          "container (runsc)",
                                          "it's",
                                          "",
                                          "a b\tc\nd",
                                          "$HOME",
                                          "`id`",
                                          "\"q\"",
                                          "back\\slash",
                                          "~",
                                          "#x",
                                          "a;b&c|d",
                                          "<>",
                                          "!x",
                                          "{a,b}",
                                          "caf\xc3\xa9",
                                          "?",
                                          "[ab]"};
  std::string line;
  for (const std::string& w : words) line += " " + shell_quote(w);
  EXPECT_EQ(::cordon_test::shell_words(line), words) << line;
}

}  // namespace
}  // namespace cordon
