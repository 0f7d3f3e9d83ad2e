// Artifact names come from the sandboxed code (it chose its files' names) and become
// paths below the user's --artifacts directory. Each input line is one artifact path:
// sanitize_artifact_path() reduces it to components and write_artifacts() writes the
// files into a fresh directory. Properties (abort() when broken): every component is
// non-empty, not "." or "..", holds no '/' and no control byte; every written file
// resolves to a path inside the directory; nothing appears beside the directory.
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "artifacts_out.h"
#include "fuzz_temp_dir.h"
#include "fuzz_util.h"

namespace {

using namespace cordon;
namespace fs = std::filesystem;
using cordon::fuzz::require;

// Deeper paths only cost time here: the property is per component.
constexpr std::size_t kMaxWrittenDepth = 32;

void check_components(const std::vector<std::string>& components) {
  for (const std::string& c : components) {
    require(!c.empty() && c != "." && c != "..");
    for (const char ch : c) {
      require(ch != '/' && static_cast<unsigned char>(ch) >= 0x20 && ch != 0x7f);
    }
  }
}

bool inside(const fs::path& root, const fs::path& p) {
  const std::string r = root.string() + "/";
  return p.string().starts_with(r);
}

std::size_t entries(const fs::path& dir) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<Artifact> artifacts;
  for (const std::string& line : fuzz::lines(bytes)) {
    const std::vector<std::string> components = cli::sanitize_artifact_path(line);
    check_components(components);
    if (components.empty() || components.size() > kMaxWrittenDepth) continue;
    if (artifacts.size() < 4) {
      artifacts.push_back(
          Artifact{.path = line, .size = line.size(), .sha256 = "", .content = line});
    }
  }
  if (artifacts.empty()) return 0;

  // scratch/box/out is the artifacts directory; scratch/box must hold nothing else after.
  const fs::path box = fuzz::scratch_dir() / "box";
  const fs::path out = box / "out";
  std::error_code ec;
  fs::remove_all(box, ec);
  fs::create_directories(out, ec);
  require(!ec);
  const fs::path real_out = fs::canonical(out);
  const Result<std::vector<std::string>> written = cli::write_artifacts(out, artifacts);
  require(entries(box) == 1);  // only out/ itself
  require(entries(fuzz::scratch_dir()) >= 1);
  if (written) {
    for (const std::string& relative : *written) {
      const fs::path full = out / relative;
      struct stat st{};
      require(::lstat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode));
      require(inside(real_out, fs::weakly_canonical(full)));
      require(fs::path(relative).is_relative());
    }
  }
  fs::remove_all(box, ec);
  return 0;
}
