#include "cordon/rooted_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <string>
#include <vector>

namespace cordon {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxLinks = 40;  // the kernel's own bound (MAXSYMLINKS)

// "a/b/../c" -> {"a", "b", "..", "c"}; empty and "." components dropped.
void push_parts(const std::string& path, std::vector<std::string>& pending) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    std::string part = path.substr(start, end - start);
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    start = end + 1;
  }
  // `pending` is consumed from the back.
  pending.insert(pending.end(), parts.rbegin(), parts.rend());
}

}  // namespace

std::optional<fs::path> resolve_below(const fs::path& root, const fs::path& inside) {
  if (root == "/") {
    std::error_code ec;
    fs::path real = fs::canonical(inside, ec);
    if (ec) return std::nullopt;
    return real;
  }
  std::vector<std::string> pending;
  push_parts(inside.string(), pending);
  std::vector<std::string> done;  // resolved components below root
  int links = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.back());
    pending.pop_back();
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    std::string host = root.string();
    for (const std::string& d : done) host += "/" + d;
    host += "/" + part;
    struct stat st{};
    if (::lstat(host.c_str(), &st) != 0) return std::nullopt;
    if (!S_ISLNK(st.st_mode)) {
      done.push_back(std::move(part));
      continue;
    }
    if (++links > kMaxLinks) return std::nullopt;
    std::array<char, PATH_MAX> buf{};
    const ssize_t n = ::readlink(host.c_str(), buf.data(), buf.size() - 1);
    if (n <= 0) return std::nullopt;
    const std::string target(buf.data(), static_cast<std::size_t>(n));
    if (target.front() == '/') done.clear();
    push_parts(target, pending);
  }
  fs::path out = root;
  for (const std::string& d : done) out /= d;
  return out;
}

}  // namespace cordon
