#include "cordon/request.h"

#include <gtest/gtest.h>

#include <string>

namespace cordon {
namespace {

using namespace std::chrono_literals;

TEST(Language, RoundTrips) {
  for (Language language : {Language::kSh, Language::kBash, Language::kPython}) {
    auto parsed = parse_language(to_string(language));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(*parsed, language);
  }
  EXPECT_EQ(parse_language("python3").value(), Language::kPython);
  for (const char* bad : {"", "Python", "ruby", "sh ", "zsh"}) {
    auto parsed = parse_language(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(EffectiveTimeout, NonPositiveMeansDefault) {
  RunRequest request;
  EXPECT_EQ(effective_timeout(request), kDefaultTimeout);
  EXPECT_EQ(kDefaultTimeout, 5s);
  request.timeout = -1000ms;
  EXPECT_EQ(effective_timeout(request), kDefaultTimeout);
  request.timeout = 200ms;
  EXPECT_EQ(effective_timeout(request), 200ms);
}

TEST(EffectiveOutputCap, ZeroMeansDefault) {
  Limits limits;
  EXPECT_EQ(effective_output_cap(limits), kDefaultOutputBytes);
  limits.output_bytes = 0;
  EXPECT_EQ(effective_output_cap(limits), kDefaultOutputBytes);
  limits.output_bytes = 10;
  EXPECT_EQ(effective_output_cap(limits), 10u);
}

TEST(Validate, DefaultRequestIsValid) { EXPECT_TRUE(validate(RunRequest{})); }

// One code size limit for every backend, checked before anything starts.
TEST(Validate, CodeUpToKMaxCodeBytes) {
  EXPECT_EQ(kMaxCodeBytes, 1u << 20);
  RunRequest request;
  request.code = std::string(kMaxCodeBytes, '#');
  EXPECT_TRUE(validate(request));
  request.code.push_back('#');
  const Status status = validate(request);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(status.error().message.find("1 MiB"), std::string::npos) << status.error().message;
}

struct EnvCase {
  const char* name;
  bool ok;
};

void PrintTo(const EnvCase& c, std::ostream* os) {
  *os << '"' << c.name << "\" " << (c.ok ? "ok" : "rejected");
}

class ValidateEnv : public testing::TestWithParam<EnvCase> {};

TEST_P(ValidateEnv, Name) {
  RunRequest request;
  request.env.emplace_back(GetParam().name, "value");
  auto status = validate(request);
  EXPECT_EQ(status.has_value(), GetParam().ok) << GetParam().name;
  if (!status) {
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  }
}

INSTANTIATE_TEST_SUITE_P(Table, ValidateEnv,
                         testing::Values(EnvCase{"FOO", true}, EnvCase{"_x9", true},
                                         EnvCase{"a", true}, EnvCase{"LANG", true},
                                         EnvCase{"", false}, EnvCase{"9A", false},
                                         EnvCase{"A-B", false}, EnvCase{"A=B", false},
                                         EnvCase{"A B", false}, EnvCase{"PATH", false},
                                         EnvCase{"HOME", false}, EnvCase{"É", false}));

TEST(Validate, EnvValueWithNul) {
  RunRequest request;
  request.env.emplace_back("FOO", std::string("a\0b", 3));
  EXPECT_FALSE(validate(request));
}

struct PathCase {
  std::string path;
  bool ok;
};

void PrintTo(const PathCase& c, std::ostream* os) {
  *os << testing::PrintToString(c.path) << ' ' << (c.ok ? "ok" : "rejected");
}

class ValidateInputPath : public testing::TestWithParam<PathCase> {};

TEST_P(ValidateInputPath, Path) {
  RunRequest request;
  request.input_files[GetParam().path] = "bytes";
  auto status = validate(request);
  EXPECT_EQ(status.has_value(), GetParam().ok) << GetParam().path;
  if (!status) {
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find("input file"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ValidateInputPath,
    testing::Values(PathCase{"a.txt", true}, PathCase{"dir/a.txt", true}, PathCase{"./a.txt", true},
                    PathCase{"a..b", true}, PathCase{"..a", true}, PathCase{".hidden", true},
                    PathCase{"a//b", true}, PathCase{"", false}, PathCase{"/etc/passwd", false},
                    PathCase{"..", false}, PathCase{"../x", false}, PathCase{"a/../b", false},
                    PathCase{"a/..", false}, PathCase{"dir/", false}, PathCase{".", false},
                    PathCase{"a/.", false}, PathCase{std::string("a\0b", 3), false}));

TEST(Validate, Globs) {
  RunRequest request;
  request.artifact_globs = {"*.txt", "out/*"};
  EXPECT_TRUE(validate(request));
  request.artifact_globs.push_back("");
  EXPECT_FALSE(validate(request));
  request.artifact_globs.back() = std::string("a\0b", 3);
  EXPECT_FALSE(validate(request));
}

}  // namespace
}  // namespace cordon
