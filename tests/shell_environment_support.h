// The smallest environment a shell runs in, for the tests of environments (the CLI's, the
// inspector's): dash and the two libraries it loads, in a merged-/usr tree (bin, lib, lib64
// -> usr/...), made from this host's own files. x86_64 Debian only: have_shell_environment()
// says whether the host has those files.
#pragma once

#include <filesystem>
#include <string>
#include <utility>

namespace cordon::testing {

inline bool have_shell_environment() {
  return std::filesystem::exists("/lib64/ld-linux-x86-64.so.2") &&
         std::filesystem::exists("/lib/x86_64-linux-gnu/libc.so.6") &&
         std::filesystem::exists("/usr/bin/dash");
}

inline std::filesystem::path make_shell_environment(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  fs::create_directories(root / "usr/bin");
  fs::copy_file("/usr/bin/dash", root / "usr/bin/dash");
  fs::create_symlink("dash", root / "usr/bin/sh");
  const std::pair<const char*, const char*> libs[] = {
      {"/lib/x86_64-linux-gnu/libc.so.6", "usr/lib/x86_64-linux-gnu/libc.so.6"},
      {"/lib64/ld-linux-x86-64.so.2", "usr/lib64/ld-linux-x86-64.so.2"}};
  for (const auto& [host, in] : libs) {
    fs::create_directories((root / in).parent_path());
    fs::copy_file(fs::canonical(host), root / in);
  }
  for (const char* link : {"bin", "lib", "lib64"}) {
    fs::create_symlink(std::string("usr/") + link, root / link);
  }
  return root;
}

}  // namespace cordon::testing
