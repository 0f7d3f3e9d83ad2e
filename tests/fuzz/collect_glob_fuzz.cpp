// The glob patterns of --collect (and of a tool call's "collect"): each input line is one
// pattern, matched by collect_artifacts() against a fixed workspace holding ordinary and
// hidden files, odd names, a symlink to a host file, a symlink to a directory and a FIFO.
// Properties: nothing throws or hangs; every collected path is relative, free of "..",
// a regular file (never a symlink, never the FIFO) inside the workspace, matched by one
// of the patterns under the documented rules (fnmatch with FNM_PATHNAME on the relative
// path, or on the bare name for a pattern without '/'), collected once, and the content
// taken stays within the byte budget.
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/request.h"
#include "cordon/workspace.h"
#include "fuzz_temp_dir.h"
#include "fuzz_util.h"

namespace {

using namespace cordon;
namespace fs = std::filesystem;
using cordon::fuzz::require;

const fs::path& workspace() {
  static const fs::path dir = [] {
    const fs::path w = fuzz::scratch_dir() / "workspace";
    fs::create_directories(w / "out" / "deep" / "er");
    fs::create_directories(w / ".cache");
    for (const char* name :
         {"a.txt", ".hidden.txt", "out/plot.png", "out/deep/x.csv", "out/deep/er/y.csv",
          "we ird[1].txt", "star*.txt", "q?.txt", ".cache/c.bin", "back\\slash"}) {
      std::ofstream(w / name) << name;
    }
    fs::create_symlink("/etc/passwd", w / "link.txt");
    fs::create_directory_symlink("/", w / "linkdir");
    require(::mkfifo((w / "fifo.txt").c_str(), 0600) == 0);
    return w;
  }();
  return dir;
}

bool matched(const std::vector<std::string>& globs, const std::string& rel) {
  const std::string name = fs::path(rel).filename().string();
  for (const std::string& glob : globs) {
    if (::fnmatch(glob.c_str(), rel.c_str(), FNM_PATHNAME) == 0) return true;
    if (glob.find('/') == std::string::npos &&
        ::fnmatch(glob.c_str(), name.c_str(), FNM_PATHNAME) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> globs = fuzz::lines(bytes);
  if (globs.size() > 16) globs.resize(16);
  // What validate() refuses never reaches the collector: as in a real run.
  RunRequest request;
  request.code = "true";
  request.artifact_globs = globs;
  if (!validate(request)) return 0;
  const std::uint64_t budget = bytes.size() * 4;
  const Result<CollectedArtifacts> got = collect_artifacts(workspace(), globs, budget);
  if (!got) {
    require(!got.error().message.empty());
    return 0;
  }
  std::set<std::string> seen;
  std::uint64_t total = 0;
  for (const Artifact& a : got->artifacts) {
    require(seen.insert(a.path).second);
    const fs::path rel(a.path);
    require(rel.is_relative() && !a.path.empty());
    for (const auto& part : rel) require(part != "..");
    struct stat st{};
    require(::lstat((workspace() / rel).c_str(), &st) == 0 && S_ISREG(st.st_mode));
    require(!a.path.starts_with("linkdir"));
    require(matched(globs, a.path));
    require(a.content.size() == a.size);
    total += a.size;
  }
  require(total <= budget);
  return 0;
}
