// Options as typed -> RunRequest, without running anything.
#include "request_builder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>

namespace cordon::cli {
namespace {

TEST(RequestBuilderTest, ParsesLimits) {
  RunOptions options;
  options.code = "true";
  options.timeout = "500ms";
  options.memory = "256M";
  options.processes = "32";
  options.cpu = "2s";
  options.output_cap = "1K";
  options.env = {"A=b=c"};
  options.collect = {"*.png"};
  const auto request = build_request(options);
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(request->timeout.count(), 500);
  EXPECT_EQ(request->limits.memory_bytes, 256u << 20);
  EXPECT_EQ(request->limits.max_processes, 32u);
  EXPECT_EQ(request->limits.cpu_time->count(), 2000);
  EXPECT_EQ(request->limits.output_bytes, 1024u);
  ASSERT_EQ(request->env.size(), 1u);
  EXPECT_EQ(request->env[0].first, "A");
  EXPECT_EQ(request->env[0].second, "b=c");
  EXPECT_EQ(request->artifact_globs, std::vector<std::string>{"*.png"});
  EXPECT_EQ(request->language, Language::kSh);
}

TEST(RequestBuilderTest, DefaultsLeaveTheTimeoutToTheBackend) {
  RunOptions options;
  options.code = "true";
  const auto request = build_request(options);
  ASSERT_TRUE(request);
  EXPECT_LE(request->timeout.count(), 0);  // effective_timeout() makes it 5 s
  EXPECT_FALSE(request->limits.memory_bytes);
}

TEST(RequestBuilderTest, CodeFromStdin) {
  std::array<int, 2> fds{};
  ASSERT_EQ(::pipe(fds.data()), 0);
  ASSERT_EQ(::write(fds[1], "echo hi", 7), 7);
  ::close(fds[1]);
  RunOptions options;
  options.source = "-";
  const auto request = build_request(options, fds[0]);
  ::close(fds[0]);
  ASSERT_TRUE(request);
  EXPECT_EQ(request->code, "echo hi");
}

TEST(RequestBuilderTest, LanguageFromExtension) {
  EXPECT_EQ(language_from_path("x/y.py"), Language::kPython);
  EXPECT_EQ(language_from_path("y.bash"), Language::kBash);
  EXPECT_EQ(language_from_path("y.sh"), Language::kSh);
  EXPECT_EQ(language_from_path("y"), std::nullopt);
}

TEST(RequestBuilderTest, InputFileSpec) {
  auto spec = parse_input_file_spec("/tmp/data.csv");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->local, "/tmp/data.csv");
  EXPECT_EQ(spec->name, "data.csv");
  spec = parse_input_file_spec("a:b:renamed.txt");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->local, "a:b");
  EXPECT_EQ(spec->name, "renamed.txt");
  EXPECT_FALSE(parse_input_file_spec("local:"));
  EXPECT_FALSE(parse_input_file_spec(":name"));
}

TEST(RequestBuilderTest, ErrorsNameTheOption) {
  RunOptions options;
  options.code = "true";
  options.timeout = "soon";
  const auto request = build_request(options);
  ASSERT_FALSE(request);
  EXPECT_EQ(request.error().message.rfind("--timeout: ", 0), 0u) << request.error().message;
}

TEST(RequestBuilderTest, InputPathClimbingOutIsRefused) {
  RunOptions options;
  options.code = "true";
  options.files = {"/etc/hostname:../x"};
  EXPECT_FALSE(build_request(options));
}

}  // namespace
}  // namespace cordon::cli
