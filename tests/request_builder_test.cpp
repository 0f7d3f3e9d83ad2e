// Options as typed -> RunRequest, without running anything.
#include "request_builder.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "cordon/temp_dir.h"

namespace cordon::cli {
namespace {

// A RunOptions with -c CODE. Built with emplace: GCC 12 at -O2 reports a false
// -Wmaybe-uninitialized for assigning a string literal to an optional<string> member of a
// RunOptions just default-constructed on the stack.
RunOptions options_with_code(const char* code) {
  RunOptions options;
  options.code.emplace(code);
  return options;
}

TEST(RequestBuilderTest, ParsesLimits) {
  RunOptions options = options_with_code("true");
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
  RunOptions options = options_with_code("true");
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
  RunOptions options = options_with_code("true");
  // "0.0001" became the 5 s default: a positive timeout under 1 ms is an error.
  for (const char* bad : {"soon", "0.0001"}) {
    options.timeout = bad;
    const auto request = build_request(options);
    ASSERT_FALSE(request) << bad;
    EXPECT_EQ(request.error().message.rfind("--timeout: ", 0), 0u) << request.error().message;
  }
  EXPECT_NE(build_request(options).error().message.find("shorter than 1 ms"), std::string::npos);
  options.timeout = "-1";  // still the default, as documented
  EXPECT_TRUE(build_request(options));
}

TEST(RequestBuilderTest, InputPathClimbingOutIsRefused) {
  RunOptions options = options_with_code("true");
  options.files = {"/etc/hostname:../x"};
  EXPECT_FALSE(build_request(options));
}

// A temp dir with files of given sizes, removed at the end of the test.
class InputFiles {
 public:
  InputFiles() {
    auto dir = TempDir::create("cordon-builder-test-");
    EXPECT_TRUE(dir);
    if (dir) dir_ = std::move(*dir);
  }
  std::string make(const std::string& name, std::size_t bytes) {
    const std::string path = (dir_.path() / name).string();
    std::ofstream(path, std::ios::binary) << std::string(bytes, '#');
    return path;
  }
  [[nodiscard]] std::filesystem::path path() const { return dir_.path(); }

 private:
  TempDir dir_;
};

// --file, --stdin-file and the code FILE must be regular files: /dev/zero was read until
// cordon ran out of memory, and a FIFO would block.
TEST(RequestBuilderTest, OnlyRegularFilesAreRead) {
  InputFiles files;
  const std::string fifo = (files.path() / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& special : {std::string("/dev/zero"), fifo, files.path().string()}) {
    RunOptions file;
    file.code = "true";
    file.files = {special + ":data"};
    RunOptions stdin_file;
    stdin_file.code = "true";
    stdin_file.stdin_file = special;
    RunOptions code_file;
    code_file.source = special;
    for (const auto& [options, flag] :
         {std::pair{file, "--file: "}, std::pair{stdin_file, "--stdin-file: "},
          std::pair{code_file, ""}}) {
      const auto request = build_request(options);
      ASSERT_FALSE(request) << special;
      EXPECT_EQ(request.error().message.rfind(flag, 0), 0u) << request.error().message;
      EXPECT_NE(request.error().message.find("not a regular file"), std::string::npos)
          << request.error().message;
    }
  }
}

TEST(RequestBuilderTest, CodeFromStdinIsReadWithABound) {
  const int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(zero, 0);
  RunOptions options;
  options.source = "-";
  const auto request = build_request(options, zero);
  ::close(zero);
  ASSERT_FALSE(request);
  EXPECT_NE(request.error().message.find("larger than 1 MiB"), std::string::npos)
      << request.error().message;
  EXPECT_NE(request.error().message.find("stdin"), std::string::npos) << request.error().message;
}

TEST(RequestBuilderTest, CodeUpToTheLimitIsTakenFromFileAndStdin) {
  InputFiles files;
  const std::string at_limit = files.make("at.sh", kMaxCodeBytes);
  const std::string over = files.make("over.sh", kMaxCodeBytes + 1);
  RunOptions options;
  options.source = at_limit;
  auto request = build_request(options);
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(request->code.size(), kMaxCodeBytes);

  options.source = over;
  request = build_request(options);
  ASSERT_FALSE(request);
  EXPECT_NE(request.error().message.find("larger than 1 MiB"), std::string::npos)
      << request.error().message;

  for (const auto& [path, ok] : {std::pair{at_limit, true}, std::pair{over, false}}) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    RunOptions from_stdin;
    from_stdin.source = "-";
    request = build_request(from_stdin, fd);
    ::close(fd);
    EXPECT_EQ(request.has_value(), ok) << path;
  }
}

TEST(RequestBuilderTest, CodeInArgumentsOverTheLimitIsRefused) {
  RunOptions options;
  options.code = std::string(kMaxCodeBytes + 1, '#');
  const auto request = build_request(options);
  ASSERT_FALSE(request);
  EXPECT_NE(request.error().message.find("1 MiB"), std::string::npos) << request.error().message;
}

TEST(RequestBuilderTest, InputsOverMaxInputSizeAreRefusedNamingTheFlag) {
  InputFiles files;
  const std::string data = files.make("data", 2048);
  RunOptions file;
  file.code = "true";
  file.files = {data};
  RunOptions stdin_file;
  stdin_file.code = "true";
  stdin_file.stdin_file = data;
  for (RunOptions options : {file, stdin_file}) {
    options.max_input_size = "1K";
    auto request = build_request(options);
    ASSERT_FALSE(request);
    EXPECT_NE(request.error().message.find("larger than 1 KiB"), std::string::npos)
        << request.error().message;
    EXPECT_NE(request.error().message.find("--max-input-size"), std::string::npos)
        << request.error().message;
    options.max_input_size = "2K";  // exactly the limit is fine
    request = build_request(options);
    ASSERT_TRUE(request) << request.error().message;
  }
}

TEST(RequestBuilderTest, DefaultMaxInputSizeHolds) {
  InputFiles files;
  RunOptions options = options_with_code("true");
  options.files = {files.make("big", kDefaultMaxInputBytes + 1)};
  const auto request = build_request(options);
  ASSERT_FALSE(request);
  EXPECT_NE(request.error().message.find("16 MiB"), std::string::npos) << request.error().message;
}

TEST(RequestBuilderTest, MaxInputSizeMustBeASize) {
  RunOptions options = options_with_code("true");
  for (const char* bad : {"lots", "0", "-1"}) {
    options.max_input_size = bad;
    const auto request = build_request(options);
    ASSERT_FALSE(request) << bad;
    EXPECT_EQ(request.error().message.rfind("--max-input-size: ", 0), 0u)
        << request.error().message;
  }
}

}  // namespace
}  // namespace cordon::cli
