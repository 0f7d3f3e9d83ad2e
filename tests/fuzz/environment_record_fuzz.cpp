// An environment's outside input (frontend/environment.h): the store's records
// (<store>/<name>.json, written by cordon but in a directory any process of the user can
// write) and the metadata files inside a tree (dist-info METADATA, egg-info PKG-INFO),
// which come from whoever built the environment. The first byte picks which; the rest is
// the file. Properties: nothing throws; a record the store accepts has a well-formed
// digest and an inventory that round-trips through its JSON; the inventory read from a tree
// names only packages with a name and a version; describe() of either is a sentence.
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string_view>

#include "frontend/environment.h"
#include "fuzz_temp_dir.h"
#include "fuzz_util.h"

namespace {

namespace fs = std::filesystem;
using namespace cordon;
using cordon::fuzz::require;

void write(const fs::path& path, std::string_view bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void check_inventory(const environment::Inventory& inv) {
  for (const environment::Versioned& v : inv.python_packages) {
    require(!v.name.empty() && !v.version.empty());
  }
  require(environment::inventory_from_json(environment::to_json(inv)) == inv);
  const environment::Selection s{.name = "x", .digest = "sha256:0", .root = "/x", .inventory = inv};
  require(environment::describe(s, inv).starts_with("The code runs in "));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const fs::path dir = cordon::fuzz::scratch_dir() / "environment";
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (data[0] % 2 == 0) {
    // A record in the store, and a tree for a valid digest to name.
    write(dir / "store" / "fuzzed.json", bytes);
    environment::Store store(dir / "store");
    const auto listed = store.list();
    const auto found = store.find("fuzzed");
    if (listed) {
      for (const environment::Environment& e : *listed) {
        require(e.digest.starts_with("sha256:") && e.digest.size() == 71);
        check_inventory(e.inventory);
      }
    } else {
      require(!listed.error().message.empty());
    }
    if (!found) require(!found.error().message.empty());
    (void)store.remove("fuzzed");
  } else {
    // Metadata of three kinds of installed distribution, and a file named like one.
    const fs::path site = dir / "tree/usr/lib/python3/dist-packages";
    write(site / "a-1.dist-info/METADATA", bytes);
    write(site / "b-1.egg-info/PKG-INFO", bytes);
    write(site / "c-1.egg-info", bytes);
    check_inventory(environment::read_inventory(dir / "tree", /*usr_local=*/true));
  }
  return 0;
}
