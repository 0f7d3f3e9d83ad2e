// An environment's inventory as far as files tell it (Python packages, tools), its JSON
// form, and the tool description's sentence about it.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "cordon/rooted_path.h"
#include "cordon/text.h"
#include "frontend/environment.h"

namespace cordon::environment {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Tools a model reaches for in shell code; the description names those present. A fixed
// list, so the sentence says what is there among what a model would try, not the whole /usr.
constexpr const char* kTools[] = {
    "awk", "bc",   "curl",  "diff", "file",    "find", "g++",   "gcc",  "git", "grep", "gzip",
    "jq",  "make", "patch", "sed",  "sqlite3", "tar",  "unzip", "wget", "xz",  "zip",
};

// "Name: x" / "Version: y" from the head of a METADATA or PKG-INFO file (RFC 822 style:
// the headers end at the first empty line).
std::optional<Versioned> read_metadata(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  Versioned v;
  std::string line;
  while (std::getline(in, line) && !line.empty() && line != "\r") {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.starts_with("Name: ")) v.name = line.substr(6);
    if (line.starts_with("Version: ")) v.version = line.substr(9);
  }
  if (v.name.empty() || v.version.empty()) return std::nullopt;
  return v;
}

// PEP 503 normalisation: the same distribution under "PyYAML" and "pyyaml" is one.
std::string normalised(std::string name) {
  name = ascii_lower(name);
  std::replace(name.begin(), name.end(), '_', '-');
  std::replace(name.begin(), name.end(), '.', '-');
  return name;
}

// The directories Python searches for installed distributions, below `root`.
std::vector<fs::path> package_dirs(const fs::path& root, bool usr_local) {
  std::vector<fs::path> dirs = {root / "usr/lib/python3/dist-packages"};
  std::vector<fs::path> bases = {root / "usr/lib"};
  if (usr_local) bases.push_back(root / "usr/local/lib");
  for (const fs::path& base : bases) {
    std::error_code ec;
    for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!name.starts_with("python3")) continue;
      for (const char* sub : {"dist-packages", "site-packages"}) {
        if (it->path() / sub != dirs.front()) dirs.push_back(it->path() / sub);
      }
    }
  }
  return dirs;
}

}  // namespace

Inventory read_inventory(const fs::path& root, bool usr_local) {
  Inventory inv;
  std::map<std::string, Versioned> packages;
  for (const fs::path& dir : package_dirs(root, usr_local)) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path& p = it->path();
      std::optional<Versioned> v;
      if (p.extension() == ".dist-info") {
        v = read_metadata(p / "METADATA");
      } else if (p.extension() == ".egg-info") {
        v = read_metadata(fs::is_directory(p) ? p / "PKG-INFO" : p);
      }
      if (v) packages.emplace(normalised(v->name), std::move(*v));
    }
  }
  for (auto& [key, v] : packages) inv.python_packages.push_back(std::move(v));

  std::vector<std::string> path = {"/usr/bin", "/bin", "/usr/sbin", "/sbin"};
  if (usr_local) path.insert(path.begin(), "/usr/local/bin");
  // Resolved below the root: an environment's alternatives link must not lead to the
  // host's file.
  const auto on_path = [&](const char* tool) {
    return std::ranges::any_of(path, [&](const std::string& dir) {
      auto host = resolve_below(root, fs::path(dir) / tool);
      return host && fs::is_regular_file(*host) && ::access(host->c_str(), X_OK) == 0;
    });
  };
  for (const char* tool : kTools) {
    if (on_path(tool)) inv.tools.emplace_back(tool);
  }
  inv.python = on_path("python3");
  return inv;
}

json to_json(const Inventory& inventory) {
  const auto list = [](const std::vector<Versioned>& items) {
    json out = json::array();
    for (const Versioned& v : items) out.push_back({{"name", v.name}, {"version", v.version}});
    return out;
  };
  return {{"interpreters", list(inventory.interpreters)},
          {"python_packages", list(inventory.python_packages)},
          {"tools", inventory.tools},
          {"python", inventory.python}};
}

Inventory inventory_from_json(const json& j) {
  // Entries it cannot read are skipped: the store is cordon's, but never trusted to crash it.
  const auto list = [&](const char* key) {
    std::vector<Versioned> out;
    if (!j.is_object() || !j.contains(key) || !j[key].is_array()) return out;
    for (const json& e : j[key]) {
      if (e.is_object() && e.value("name", json()).is_string() &&
          e.value("version", json()).is_string()) {
        out.push_back({e["name"].get<std::string>(), e["version"].get<std::string>()});
      }
    }
    return out;
  };
  Inventory inv;
  inv.python =
      j.is_object() && j.contains("python") && j["python"].is_boolean() && j["python"].get<bool>();
  inv.interpreters = list("interpreters");
  inv.python_packages = list("python_packages");
  if (j.is_object() && j.contains("tools") && j["tools"].is_array()) {
    for (const json& t : j["tools"]) {
      if (t.is_string()) inv.tools.push_back(t.get<std::string>());
    }
  }
  return inv;
}

std::string describe(const Selection& selection) {
  return describe(selection, inventory_for(selection));
}

std::string describe(const Selection& selection, const Inventory& inventory) {
  if (selection.engine_image) return "";  // not cordon's to state: nothing was measured
  std::string out;
  if (selection.is_host()) {
    out = "The code runs on this host's own /usr (the default environment, not pinned).";
  } else {
    const std::string which = selection.name.empty() ? "an unregistered environment"
                                                     : "the environment '" + selection.name + "'";
    out = "The code runs in " + which + " (" + selection.digest + "), read-only.";
  }
  std::vector<std::string> packages;
  packages.reserve(inventory.python_packages.size());
  for (const Versioned& v : inventory.python_packages) packages.push_back(v.name + " " + v.version);
  if (inventory.python) {
    out += packages.empty() ? " Python has only its standard library: no third-party packages."
                            : " Python packages beyond the standard library: " + join(packages) +
                                  "; no others are installed.";
  }
  if (!inventory.tools.empty()) out += " Command-line tools: " + join(inventory.tools) + ".";
  return out;
}

}  // namespace cordon::environment
