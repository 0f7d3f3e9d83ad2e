// The bearer token: random bytes from the kernel, a private file under XDG state.
#include "mcp/http_token.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "cordon/unique_fd.h"

namespace cordon::cli::mcp {
namespace fs = std::filesystem;
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read at start-up
  return value != nullptr ? value : "";
}

// mkdir -p, each directory it creates mode 0700. Existing ones are left as they are (the
// parent of a --token-file may be the home directory); the file itself is 0600.
Status make_private_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (dir.has_parent_path() && dir.parent_path() != dir) {
      if (auto made = make_private_dir(dir.parent_path()); !made) return made;
    }
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return fail_errno("cannot create " + dir.string());
    }
  }
  return {};
}

std::string trimmed_content(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  const auto end = token.find_last_not_of(" \t\r\n");
  token.erase(end == std::string::npos ? 0 : end + 1);
  const auto begin = token.find_first_not_of(" \t\r\n");
  return begin == std::string::npos ? std::string() : token.substr(begin);
}

// Written to a temporary file made 0600 by mkstemp, then renamed over the token file: the
// token is never in a file others can read, and a reader never sees half of it.
Status write_private_file(const fs::path& path, const std::string& content) {
  if (auto made = make_private_dir(path.parent_path()); !made) return made;
  std::string tmp_name = path.string() + ".XXXXXX";
  std::vector<char> buffer(tmp_name.begin(), tmp_name.end());
  buffer.push_back('\0');
  const UniqueFd fd(::mkstemp(buffer.data()));  // O_EXCL, mode 0600
  if (!fd) return fail_errno("cannot create a file beside " + path.string());
  tmp_name = buffer.data();
  const std::string line = content + "\n";
  const bool written =
      ::write(fd.get(), line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
      ::fsync(fd.get()) == 0;
  if (!written || ::rename(tmp_name.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_name.c_str());
    return fail_errno("cannot write " + path.string(), err);
  }
  return {};
}

}  // namespace

Result<fs::path> default_token_path() {
  // The XDG spec: a relative $XDG_STATE_HOME is invalid and ignored.
  if (const std::string state = env("XDG_STATE_HOME"); !state.empty() && state.front() == '/') {
    return fs::path(state) / "cordon" / "mcp-token";
  }
  std::string home = env("HOME");
  if (home.empty()) {
    const passwd* entry = ::getpwuid(::getuid());  // NOLINT(concurrency-mt-unsafe): start-up
    if (entry != nullptr && entry->pw_dir != nullptr) home = entry->pw_dir;
  }
  if (home.empty()) {
    return fail(ErrorCode::kNotFound,
                "no place for the MCP token: set XDG_STATE_HOME or HOME, or give --token-file");
  }
  return fs::path(home) / ".local" / "state" / "cordon" / "mcp-token";
}

Result<std::string> resolve_token(const HttpOptions& options, fs::path& wrote_to) {
  wrote_to.clear();
  if (options.token) {
    if (options.token->empty()) return fail(ErrorCode::kInvalidArgument, "--token is empty");
    return *options.token;
  }
  fs::path path = options.token_path;
  if (path.empty()) {
    auto fallback = default_token_path();
    if (!fallback) return std::unexpected(fallback.error());
    path = *fallback;
  }
  if (options.reuse_token_file) {
    std::error_code ec;
    if (fs::exists(path, ec)) {
      std::string token = trimmed_content(path);
      if (token.empty()) {
        return fail(ErrorCode::kInvalidArgument, "the token file " + path.string() + " is empty");
      }
      return token;
    }
  }
  auto token = random_hex(32);
  if (!token) return token;
  if (auto written = write_private_file(path, *token); !written) {
    return std::unexpected(written.error());
  }
  wrote_to = path;
  return token;
}

}  // namespace cordon::cli::mcp
