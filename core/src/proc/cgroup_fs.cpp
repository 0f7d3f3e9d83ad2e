#include "cordon/proc/cgroup_fs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "cordon/unique_fd.h"

namespace cordon::proc::cgroupfs {

namespace fs = std::filesystem;

Result<std::string> read(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return fail_errno("open " + path.string());
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("read " + path.string());
    }
    if (n == 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

namespace {

// One read of a small control file from its start (read_small, read_again): kernfs makes
// the whole text for it. `path` names the file in an error; nullptr: an fd opened earlier.
Result<std::string> read_from_start(int fd, const fs::path* path) {
  char buf[1024];
  ssize_t n = 0;
  do {
    n = ::pread(fd, buf, sizeof(buf), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    return fail_errno(path != nullptr ? "read " + path->string()
                                      : std::string("read a cgroup control file again"));
  }
  return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace

Result<std::string> read_small(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return fail_errno("open " + path.string());
  return read_from_start(fd.get(), &path);
}

Status write(const std::filesystem::path& path, std::string_view text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return fail_errno("open " + path.string());
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    return fail_errno("write \"" + std::string(text) + "\" to " + path.string());
  }
  return {};
}

namespace {
std::optional<std::int64_t> to_int(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}
}  // namespace

std::optional<std::int64_t> keyed_value(std::string_view text, std::string_view key) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ' ') {
      return to_int(line.substr(key.size() + 1));
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<std::int64_t> single_value(std::string_view text) { return to_int(text); }

Status remove_tree(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec) && !entry.is_symlink(ec)) {
      if (auto st = remove_tree(entry.path()); !st) return st;
    }
  }
  if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) return fail_errno("rmdir " + dir.string());
  return {};
}

bool has_word(std::string_view list, std::string_view word) {
  std::size_t start = 0;
  while (start < list.size()) {
    std::size_t end = list.find_first_of(" \n", start);
    if (end == std::string_view::npos) end = list.size();
    if (list.substr(start, end - start) == word) return true;
    start = end + 1;
  }
  return false;
}

const char* figure_file(Figure figure, bool v2) {
  switch (figure) {
    case Figure::kMemoryCurrent:
      return v2 ? "memory.current" : "memory.usage_in_bytes";
    case Figure::kMemoryPeak:
      return v2 ? "memory.peak" : "memory.max_usage_in_bytes";
    case Figure::kCpuUsec:
      return v2 ? "cpu.stat" : "cpuacct.usage";
    case Figure::kOomKills:
      return v2 ? "memory.events" : "memory.oom_control";
    case Figure::kPidsMaxHits:
      return "pids.events";
  }
  return "";
}

std::optional<std::int64_t> figure_value(Figure figure, bool v2, std::string_view text) {
  switch (figure) {
    case Figure::kMemoryCurrent:
    case Figure::kMemoryPeak:
      return single_value(text);
    case Figure::kCpuUsec: {
      if (v2) return keyed_value(text, "usage_usec");
      const std::optional<std::int64_t> ns = single_value(text);
      return ns ? std::optional<std::int64_t>(*ns / 1000) : std::nullopt;
    }
    case Figure::kOomKills:
      return keyed_value(text, "oom_kill");
    case Figure::kPidsMaxHits:
      return keyed_value(text, "max");
  }
  return std::nullopt;
}

Result<std::string> read_again(int fd) { return read_from_start(fd, nullptr); }

std::optional<std::int64_t> read_figure(const fs::path& dir, Figure figure, bool v2) {
  const Result<std::string> text = read_small(dir / figure_file(figure, v2));
  return text ? figure_value(figure, v2, *text) : std::nullopt;
}

std::optional<std::int64_t> memory_current(const fs::path& dir, bool v2) {
  return read_figure(dir, Figure::kMemoryCurrent, v2);
}

std::optional<std::int64_t> memory_peak(const fs::path& dir, bool v2) {
  return read_figure(dir, Figure::kMemoryPeak, v2);
}

std::optional<std::int64_t> cpu_usec(const fs::path& dir, bool v2) {
  return read_figure(dir, Figure::kCpuUsec, v2);
}

bool oom_killed(const fs::path& dir, bool v2) {
  return read_figure(dir, Figure::kOomKills, v2).value_or(0) > 0;
}

bool pids_max_hit(const fs::path& dir) {
  // pids.events is named alike on v1 and v2.
  return read_figure(dir, Figure::kPidsMaxHits, /*v2=*/true).value_or(0) > 0;
}

}  // namespace cordon::proc::cgroupfs
