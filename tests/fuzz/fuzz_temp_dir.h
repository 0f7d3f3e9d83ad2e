// A private scratch directory for the fuzz targets that touch files: made once per
// process under $TMPDIR (or /tmp), removed at exit. Never a path of the host's own data.
#pragma once

#include <stdlib.h>  // NOLINT(modernize-deprecated-headers): mkdtemp is POSIX, not in <cstdlib>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace cordon::fuzz {

inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern =
          std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/cordon-fuzz-XXXXXX";
      if (::mkdtemp(pattern.data()) == nullptr) std::abort();
      path = pattern;
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
    Dir(const Dir&) = delete;
    Dir& operator=(const Dir&) = delete;
  };
  static const Dir dir;
  return dir.path;
}

}  // namespace cordon::fuzz
