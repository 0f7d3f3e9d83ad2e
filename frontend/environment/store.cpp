// The environment store: <dir>/<name>.json records (name, digest, source, time,
// inventory) and <dir>/trees/<digest hex>/ the copies they name. A tree is written once,
// under a temporary name, hashed, then renamed into place: a tree under its digest's
// name is always complete, and never written again.
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>

#include "frontend/data_dir.h"
#include "frontend/environment.h"
#include "frontend/environment/tree.h"

namespace cordon::environment {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string now_utc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

fs::path tree_dir(const fs::path& store, const std::string& digest) {
  // "sha256:<hex>" -> trees/<hex>
  return store / "trees" / digest.substr(digest.find(':') + 1);
}

Result<Environment> read_record(const fs::path& store, const fs::path& file) {
  std::ifstream in(file);
  if (!in) return fail_errno("cannot read " + file.string());
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.value("name", json()).is_string() ||
      !j.value("digest", json()).is_string()) {
    return fail(ErrorCode::kInvalidArgument, file.string() + " is not an environment record");
  }
  Environment e;
  e.name = j["name"].get<std::string>();
  e.digest = j["digest"].get<std::string>();
  if (!e.digest.starts_with("sha256:") || e.digest.size() != 7 + 64 ||
      e.digest.find_first_not_of("0123456789abcdef", 7) != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument, file.string() + " has no valid digest");
  }
  e.root = tree_dir(store, e.digest);
  if (j.contains("source") && j["source"].is_string()) e.source = j["source"].get<std::string>();
  if (j.contains("added_at") && j["added_at"].is_string()) {
    e.added_at = j["added_at"].get<std::string>();
  }
  if (j.contains("inventory")) e.inventory = inventory_from_json(j["inventory"]);
  return e;
}

Status write_record(const fs::path& file, const Environment& e) {
  const json j = {{"name", e.name},
                  {"digest", e.digest},
                  {"source", e.source},
                  {"added_at", e.added_at},
                  {"inventory", to_json(e.inventory)}};
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << "\n";
    if (!out.flush()) return fail_errno("cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);  // atomic: a reader sees the old record or the new one
  if (ec) return fail(ErrorCode::kSystem, "cannot write " + file.string() + ": " + ec.message());
  return {};
}

// A tree of the store, or a copy under way: its directories keep their source's modes, so
// a read-only one must be made writable before it can be emptied (an unprivileged store).
Status remove_tree(const fs::path& root) {
  std::error_code ec;
  fs::permissions(root, fs::perms::owner_all, fs::perm_options::add, ec);
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
  }
  fs::remove_all(root, ec);
  if (ec) return fail(ErrorCode::kSystem, "cannot remove " + root.string() + ": " + ec.message());
  return {};
}

}  // namespace

Result<fs::path> Store::default_dir() {
  if (const std::string_view d = frontend::env_value(kStoreEnv); !d.empty()) return fs::path(d);
  if (::geteuid() == 0) return fs::path("/var/lib/cordon/environments");
  const std::optional<fs::path> data = frontend::data_dir();
  if (!data) {
    return fail(ErrorCode::kNotFound,
                std::string("no place for environments: set ") + kStoreEnv + " or HOME");
  }
  return *data / "environments";
}

Status Store::check_name(const std::string& name) {
  const bool ok =
      !name.empty() && name.size() <= 64 &&
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._-") == std::string::npos &&
      std::isalnum(static_cast<unsigned char>(name.front())) != 0;
  if (!ok) {
    return fail(ErrorCode::kInvalidArgument,
                "environment name '" + name +
                    "': 1-64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit");
  }
  if (name == kHostName) {
    return fail(ErrorCode::kInvalidArgument,
                "'host' is the default environment (the host's /usr); choose another name");
  }
  return {};
}

Result<Environment> Store::add(const std::string& name, const fs::path& source,
                               const MeasureInterpreters& measure,
                               const std::string& source_label) {
  if (Status s = check_name(name); !s) return std::unexpected(s.error());
  const fs::path record = dir_ / (name + ".json");
  if (fs::exists(record)) {
    return fail(ErrorCode::kInvalidArgument,
                "environment '" + name + "' exists; `cordon environment rm " + name + "` first");
  }
  std::error_code ec;
  const fs::path absolute = fs::absolute(source, ec);
  if (ec) return fail(ErrorCode::kInvalidArgument, "environment source " + source.string());
  auto digest = tree_digest(absolute);
  if (!digest) return std::unexpected(digest.error());

  // Traversable by everyone: a sandbox's set-up process resolves the bind source as its
  // own host uid, not as the store's owner.
  fs::create_directories(dir_ / "trees", ec);
  if (ec) return fail(ErrorCode::kSystem, "cannot create " + dir_.string() + ": " + ec.message());
  fs::permissions(dir_, fs::perms(0755), ec);
  fs::permissions(dir_ / "trees", fs::perms(0755), ec);

  const fs::path tree = tree_dir(dir_, *digest);
  // A tree this add made goes again if the add fails after it: nothing else names it.
  const bool made_here = !fs::exists(tree);
  if (made_here) {
    std::random_device rd;
    const fs::path tmp = dir_ / "trees" / (".incoming-" + std::to_string(rd()));
    Status copied = copy_tree(absolute, tmp);
    auto copy_digest =
        copied ? tree_digest(tmp) : Result<std::string>(std::unexpected(copied.error()));
    if (!copy_digest || *copy_digest != *digest) {
      (void)remove_tree(tmp);
      if (!copy_digest) return std::unexpected(copy_digest.error());
      return fail(ErrorCode::kInvalidArgument,
                  source.string() + " changed while it was copied: its copy hashes to " +
                      *copy_digest + ", not " + *digest);
    }
    ::chmod(tmp.c_str(), 0755);
    fs::rename(tmp, tree, ec);
    if (ec) {
      (void)remove_tree(tmp);
      return fail(ErrorCode::kSystem, "cannot store " + tree.string());
    }
  }

  Environment e{.name = name,
                .digest = *digest,
                .root = tree,
                .source = source_label.empty() ? absolute.string() : source_label,
                .added_at = now_utc(),
                .inventory = read_inventory(tree, /*usr_local=*/true)};
  if (measure) {
    auto interpreters = measure(tree.string());
    if (!interpreters) {
      if (made_here) (void)remove_tree(tree);
      return fail(interpreters.error().code,
                  "cannot measure the interpreters of '" + name +
                      "' (the tool description states only what was measured): " +
                      interpreters.error().describe());
    }
    e.inventory.interpreters = std::move(*interpreters);
  }
  if (Status s = write_record(record, e); !s) {
    if (made_here) (void)remove_tree(tree);
    return std::unexpected(s.error());
  }
  return e;
}

Result<std::vector<Environment>> Store::list() const {
  std::vector<Environment> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".json") continue;
    auto e = read_record(dir_, it->path());
    if (!e) return std::unexpected(e.error());
    out.push_back(std::move(*e));
  }
  std::ranges::sort(out, {}, &Environment::name);
  return out;
}

Result<Environment> Store::find(const std::string& name) const {
  if (Status s = check_name(name); !s) return std::unexpected(s.error());
  const fs::path record = dir_ / (name + ".json");
  if (!fs::exists(record)) {
    return fail(ErrorCode::kNotFound, "no environment named '" + name + "' in " + dir_.string() +
                                          " (`cordon environment list`)");
  }
  auto e = read_record(dir_, record);
  if (!e) return e;
  if (!fs::is_directory(e->root)) {
    return fail(ErrorCode::kNotFound,
                "environment '" + name + "': its tree " + e->root.string() + " is missing");
  }
  return e;
}

Status Store::remove(const std::string& name) {
  auto e = find(name);
  if (!e && e.error().code == ErrorCode::kNotFound && !fs::exists(dir_ / (name + ".json"))) {
    return std::unexpected(e.error());
  }
  std::error_code ec;
  fs::remove(dir_ / (name + ".json"), ec);
  if (ec) return fail(ErrorCode::kSystem, "cannot remove '" + name + "': " + ec.message());
  if (!e) return {};  // the record named a missing tree: nothing more to remove
  auto rest = list();
  if (!rest) return std::unexpected(rest.error());
  const bool shared = std::ranges::any_of(
      *rest, [&](const Environment& other) { return other.digest == e->digest; });
  return shared ? Status{} : remove_tree(e->root);
}

Result<Selection> select(const std::optional<std::string>& environment,
                         const std::optional<std::string>& rootfs) {
  if (environment && rootfs) {
    return fail(ErrorCode::kInvalidArgument,
                "--environment and --rootfs name the same thing: give one");
  }
  if (rootfs) {
    std::error_code ec;
    const fs::path dir = fs::absolute(*rootfs, ec).lexically_normal();
    if (ec) return fail(ErrorCode::kInvalidArgument, "--rootfs " + *rootfs);
    std::string root = dir.string();
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    auto digest = tree_digest(root);
    if (!digest) return std::unexpected(digest.error());
    return Selection{.name = "", .digest = *digest, .root = root, .inventory = std::nullopt};
  }
  if (!environment || *environment == kHostName)
    return Selection{.name = kHostName, .digest = "", .root = "", .inventory = std::nullopt};
  auto dir = Store::default_dir();
  if (!dir) return std::unexpected(dir.error());
  auto e = Store(*dir).find(*environment);
  if (!e) return std::unexpected(e.error());
  return Selection{
      .name = e->name, .digest = e->digest, .root = e->root.string(), .inventory = e->inventory};
}

void show_in(const Selection& selection, BackendOptions& options) {
  if (selection.is_host() || selection.engine_image) return;
  options.system_root = selection.root;
  options.system_root_digest = selection.digest;
}

Inventory inventory_for(const Selection& selection) {
  if (selection.inventory) return *selection.inventory;
  if (selection.engine_image) return {};
  return selection.is_host() ? read_inventory("/", /*usr_local=*/false)
                             : read_inventory(selection.root, /*usr_local=*/true);
}

}  // namespace cordon::environment
