// The bundle's record of its runtime: written before the start, read by the sweep.
#include "runtime_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "cordon/unique_fd.h"

namespace cordon::oci {

namespace fs = std::filesystem;

Status record_runtime(const fs::path& bundle, const RuntimeCli& runtime) {
  std::string text = runtime.binary().string() + "\n";
  for (const std::string& arg : runtime.global_args()) text += arg + "\n";
  const fs::path path = bundle / kRuntimeRecordName;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return fail_errno("create " + path.string());
  std::string_view rest = text;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd.get(), rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail_errno("write " + path.string());
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

RuntimeCli recorded_runtime(const fs::path& bundle, const RuntimeCli& fallback) {
  std::ifstream in(bundle / kRuntimeRecordName);
  std::string binary;
  if (!std::getline(in, binary) || binary.empty()) return fallback;
  // Only a runtime cordon drives, where cordon itself would find it.
  const std::string name = fs::path(binary).filename();
  if ((name != "runc" && name != "crun" && name != "runsc") || find_tool(name) != binary) {
    return fallback;
  }
  std::vector<std::string> args;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("--")) return fallback;
    args.push_back(line);
  }
  return {binary, fallback.state_root(), std::move(args)};
}

}  // namespace cordon::oci
