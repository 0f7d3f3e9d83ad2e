#include "cordon/owner.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdint>

#include "cordon/unique_fd.h"

namespace cordon {

bool pid_alive(pid_t pid) {
  if (pid <= 0) return false;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return false;
  char buf[512];
  const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
  if (n <= 0) return false;
  // The state follows the last ')' (the command name may itself contain parentheses).
  const std::string_view stat(buf, static_cast<std::size_t>(n));
  const auto paren = stat.rfind(')');
  return paren == std::string_view::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

std::string owned_prefix(std::string_view prefix) {
  return std::string(prefix) + std::to_string(::getpid()) + "-";
}

std::string next_owned_name(std::string_view prefix) {
  static std::atomic<std::uint64_t> counter{0};
  return owned_prefix(prefix) + std::to_string(counter.fetch_add(1) + 1);
}

std::optional<pid_t> owner_pid(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  const auto dash = name.find('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + dash, pid);
  if (ec != std::errc() || end != name.data() + dash || pid <= 0) return std::nullopt;
  return pid;
}

}  // namespace cordon
