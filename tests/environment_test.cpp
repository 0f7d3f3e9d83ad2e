// Environments (frontend/environment.h): the digest, the store, the inventory and its
// sentence, the rooted lookups, and runs of the real `cordon` in an environment through the
// namespace and container backends.
#include "frontend/environment.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cordon/policy/fs_plan.h"
#include "cordon/rooted_path.h"
#include "cordon/scope_exit.h"
#include "cordon/temp_dir.h"
#include "environment_command.h"
#include "frontend/environment/tree.h"
#include "kernel_features.h"
#include "shell_environment_support.h"

namespace {

namespace fs = std::filesystem;
using cordon::environment::Inventory;
using cordon::environment::Selection;
using cordon::environment::Store;
using cordon::environment::Versioned;
using nlohmann::json;

cordon::TempDir temp_dir() {
  auto made = cordon::TempDir::create("cordon-env-test");
  if (!made) throw std::runtime_error(made.error().describe());
  return std::move(*made);
}

void write(const fs::path& path, const std::string& text, fs::perms mode = fs::perms(0644)) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  fs::permissions(path, mode);
}

std::string digest_of(const fs::path& root) {
  auto d = cordon::environment::tree_digest(root);
  EXPECT_TRUE(d.has_value()) << (d ? "" : d.error().describe());
  return d ? *d : "";
}

// A small tree: files of two modes, a directory, a relative and an absolute symlink.
fs::path make_tree(const fs::path& root) {
  write(root / "usr/bin/tool", "#!/bin/sh\necho tool\n", fs::perms(0755));
  write(root / "usr/share/doc/readme", "hello\n");
  fs::create_directories(root / "usr/lib/empty");
  fs::create_symlink("usr/bin", root / "bin");
  fs::create_symlink("/usr/share/doc/readme", root / "usr/bin/readme-link");
  return root;
}

TEST(EnvironmentDigest, TheSameTreeHashesTheSameAndItsCopyAsItsSource) {
  cordon::TempDir tmp = temp_dir();
  const fs::path a = make_tree(tmp.path() / "a");
  const std::string first = digest_of(a);
  EXPECT_TRUE(first.starts_with("sha256:")) << first;
  EXPECT_EQ(first.size(), 7u + 64u);
  EXPECT_EQ(digest_of(a), first);
  // Built again in another order and place: the same contents, the same digest.
  const fs::path b = tmp.path() / "b";
  fs::create_directories(b / "usr/lib/empty");
  fs::create_symlink("/usr/share/doc/readme", [&] {
    fs::create_directories(b / "usr/bin");
    return b / "usr/bin/readme-link";
  }());
  write(b / "usr/share/doc/readme", "hello\n");
  fs::create_symlink("usr/bin", b / "bin");
  write(b / "usr/bin/tool", "#!/bin/sh\necho tool\n", fs::perms(0755));
  EXPECT_EQ(digest_of(b), first);
  // The store's copy.
  ASSERT_TRUE(cordon::environment::copy_tree(a, tmp.path() / "copy").has_value());
  EXPECT_EQ(digest_of(tmp.path() / "copy"), first);
  EXPECT_EQ(fs::read_symlink(tmp.path() / "copy/usr/bin/readme-link"), "/usr/share/doc/readme");
  EXPECT_EQ(fs::status(tmp.path() / "copy/usr/bin/tool").permissions(), fs::perms(0755));
}

TEST(EnvironmentDigest, AModeAContentALinkTargetOrANameEachChangeIt) {
  cordon::TempDir tmp = temp_dir();
  const fs::path root = make_tree(tmp.path() / "t");
  std::vector<std::string> seen = {digest_of(root)};
  const auto changed = [&](const char* what) {
    const std::string d = digest_of(root);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), d), 0) << what << " did not change the digest";
    seen.push_back(d);
  };
  fs::permissions(root / "usr/share/doc/readme", fs::perms(0600));
  changed("a file's mode");
  write(root / "usr/share/doc/readme", "hello!\n", fs::perms(0600));
  changed("a file's contents");
  fs::remove(root / "usr/bin/readme-link");
  fs::create_symlink("/usr/share/doc/other", root / "usr/bin/readme-link");
  changed("a link's target");
  fs::rename(root / "usr/bin/tool", root / "usr/bin/tool2");
  changed("a name");
  fs::permissions(root / "usr/lib/empty", fs::perms(0700));
  changed("a directory's mode");
  fs::create_directories(root / "usr/lib/empty/new");
  changed("a new directory");
}

TEST(EnvironmentDigest, FifosAreLeftOutOfTheDigestAndTheCopy) {
  cordon::TempDir tmp = temp_dir();
  const fs::path root = make_tree(tmp.path() / "t");
  const std::string before = digest_of(root);
  ASSERT_EQ(::mkfifo((root / "usr/fifo").c_str(), 0644), 0);
  EXPECT_EQ(digest_of(root), before);
  ASSERT_TRUE(cordon::environment::copy_tree(root, tmp.path() / "copy").has_value());
  EXPECT_FALSE(fs::exists(fs::symlink_status(tmp.path() / "copy/usr/fifo")));
}

TEST(EnvironmentDigest, ANonDirectoryIsNoEnvironment) {
  cordon::TempDir tmp = temp_dir();
  write(tmp.path() / "file", "x");
  EXPECT_FALSE(cordon::environment::tree_digest(tmp.path() / "file").has_value());
  EXPECT_FALSE(cordon::environment::tree_digest(tmp.path() / "missing").has_value());
}

TEST(RootedPath, LinksResolveBelowTheRootNeverIntoTheHost) {
  cordon::TempDir tmp = temp_dir();
  const fs::path root = tmp.path() / "root";
  write(root / "usr/bin/mawk", "x", fs::perms(0755));
  fs::create_directories(root / "etc/alternatives");
  fs::create_symlink("/usr/bin/mawk", root / "etc/alternatives/awk");
  fs::create_symlink("/etc/alternatives/awk", root / "usr/bin/awk");
  fs::create_symlink("../../../../../usr/bin/mawk", root / "usr/bin/up");
  fs::create_symlink("/usr/bin/ls", root / "usr/bin/hostls");  // the host has one; root not
  fs::create_symlink("loop", root / "usr/bin/loop");
  EXPECT_EQ(cordon::resolve_below(root, "/usr/bin/awk"), root / "usr/bin/mawk");
  EXPECT_EQ(cordon::resolve_below(root, "/usr/bin/up"), root / "usr/bin/mawk");
  EXPECT_EQ(cordon::resolve_below(root, "/usr/bin/hostls"), std::nullopt);
  EXPECT_EQ(cordon::resolve_below(root, "/usr/bin/loop"), std::nullopt);
  EXPECT_EQ(cordon::resolve_below(root, "/nothing"), std::nullopt);
}

TEST(EnvironmentInventory, PackagesFromTheirMetadataAndToolsFoundBelowTheRoot) {
  cordon::TempDir tmp = temp_dir();
  const fs::path root = tmp.path() / "root";
  write(root / "usr/lib/python3/dist-packages/numpy-1.24.2.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: numpy\nVersion: 1.24.2\n\nName: not-this\n");
  write(root / "usr/lib/python3/dist-packages/six-1.16.0.egg-info/PKG-INFO",
        "Name: six\nVersion: 1.16.0\n");
  write(root / "usr/lib/python3/dist-packages/PyYAML-6.0.egg-info", "Name: PyYAML\nVersion: 6.0\n");
  write(root / "usr/local/lib/python3.11/dist-packages/pandas-1.5.3.dist-info/METADATA",
        "Name: pandas\nVersion: 1.5.3\n");
  write(root / "usr/bin/python3.11", "x", fs::perms(0755));
  fs::create_symlink("python3.11", root / "usr/bin/python3");
  write(root / "usr/bin/mawk", "x", fs::perms(0755));
  fs::create_directories(root / "etc/alternatives");
  fs::create_symlink("/usr/bin/mawk", root / "etc/alternatives/awk");
  fs::create_symlink("/etc/alternatives/awk", root / "usr/bin/awk");
  fs::create_symlink("/usr/bin/curl", root / "usr/bin/curl-link");
  fs::create_symlink("/usr/bin/git", root / "usr/bin/git");  // only the host may have it
  write(root / "usr/bin/sed", "x", fs::perms(0644));         // not executable

  const Inventory inv = cordon::environment::read_inventory(root, /*usr_local=*/true);
  const std::vector<Versioned> want = {
      {"numpy", "1.24.2"}, {"pandas", "1.5.3"}, {"PyYAML", "6.0"}, {"six", "1.16.0"}};
  EXPECT_EQ(inv.python_packages, want);
  EXPECT_EQ(inv.tools, std::vector<std::string>{"awk"});
  EXPECT_TRUE(inv.python);
  // /usr/local hidden (the host's default): pandas is not seen.
  const Inventory hidden = cordon::environment::read_inventory(root, /*usr_local=*/false);
  EXPECT_EQ(hidden.python_packages.size(), 3u);
  // Through JSON and back.
  EXPECT_EQ(cordon::environment::inventory_from_json(cordon::environment::to_json(inv)), inv);
  EXPECT_EQ(
      cordon::environment::inventory_from_json(json::parse(R"({"tools": [1, "jq"],
      "python_packages": [{"name": 2}], "python": "yes"})")),
      (Inventory{.interpreters = {}, .python_packages = {}, .tools = {"jq"}, .python = false}));
}

TEST(EnvironmentInventory, TheSentenceNamesTheEnvironmentItsDigestPackagesAndTools) {
  Inventory inv{.interpreters = {},
                .python_packages = {{"numpy", "1.24.2"}, {"pandas", "1.5.3"}},
                .tools = {"awk", "git"},
                .python = true};
  const Selection named{.name = "sci", .digest = "sha256:ab", .root = "/x", .inventory = inv};
  EXPECT_EQ(cordon::environment::describe(named, inv),
            "The code runs in the environment 'sci' (sha256:ab), read-only. Python packages "
            "beyond the standard library: numpy 1.24.2, pandas 1.5.3; no others are installed. "
            "Command-line tools: awk, git.");
  const Selection host{.name = "host", .digest = "", .root = "", .inventory = std::nullopt};
  inv.python_packages.clear();
  EXPECT_EQ(cordon::environment::describe(host, inv),
            "The code runs on this host's own /usr (the default environment, not pinned). Python "
            "has only its standard library: no third-party packages. Command-line tools: awk, "
            "git.");
  inv.python = false;
  inv.tools.clear();
  const Selection loose{.name = "", .digest = "sha256:cd", .root = "/y", .inventory = std::nullopt};
  EXPECT_EQ(cordon::environment::describe(loose, inv),
            "The code runs in an unregistered environment (sha256:cd), read-only.");
}

TEST(EnvironmentStore, AddListFindAndRemove) {
  cordon::TempDir tmp = temp_dir();
  const fs::path source = make_tree(tmp.path() / "src");
  write(source / "usr/lib/python3/dist-packages/six-1.16.0.dist-info/METADATA",
        "Name: six\nVersion: 1.16.0\n");
  Store store(tmp.path() / "store");
  std::string measured_root;
  const auto measure = [&](const std::string& root) -> cordon::Result<std::vector<Versioned>> {
    measured_root = root;
    return std::vector<Versioned>{{"python", "Python 3.11.2"}};
  };
  auto added = store.add("sci", source, measure);
  ASSERT_TRUE(added.has_value()) << added.error().describe();
  EXPECT_EQ(added->digest, digest_of(source));
  EXPECT_EQ(added->root, store.dir() / "trees" / added->digest.substr(7));
  EXPECT_EQ(measured_root, added->root.string());  // measured on the copy, not the source
  EXPECT_EQ(digest_of(added->root), added->digest);
  EXPECT_EQ(added->inventory.interpreters, (std::vector<Versioned>{{"python", "Python 3.11.2"}}));
  EXPECT_EQ(added->inventory.python_packages, (std::vector<Versioned>{{"six", "1.16.0"}}));
  EXPECT_EQ(fs::status(store.dir()).permissions() & fs::perms(0755), fs::perms(0755));

  // The same tree under a second name shares the copy.
  auto again = store.add("sci2", source, nullptr);
  ASSERT_TRUE(again.has_value()) << again.error().describe();
  EXPECT_EQ(again->root, added->root);
  EXPECT_FALSE(store.add("sci", source, nullptr).has_value());  // taken
  EXPECT_FALSE(store.add("host", source, nullptr).has_value());
  for (const char* bad : {"", "Sci", "-x", "a/b", "a b", ".."}) {
    EXPECT_FALSE(Store::check_name(bad).has_value()) << bad;
  }
  // A measurement that fails fails the add: the description states only what was measured.
  const auto broken = [](const std::string&) -> cordon::Result<std::vector<Versioned>> {
    return cordon::fail(cordon::ErrorCode::kUnavailable, "no isolating backend");
  };
  auto refused = store.add("sci3", source, broken);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().describe().find("no isolating backend"), std::string::npos);
  EXPECT_FALSE(store.find("sci3").has_value());

  // A failed add leaves no tree behind when nothing else names it, read-only directories
  // and all.
  const fs::path other = make_tree(tmp.path() / "other");
  fs::permissions(other / "usr/lib/empty", fs::perms(0555));
  Store fresh(tmp.path() / "fresh");
  ASSERT_FALSE(fresh.add("x", other, broken).has_value());
  EXPECT_TRUE(fs::is_empty(fresh.dir() / "trees"));

  auto listed = store.list();
  ASSERT_TRUE(listed.has_value());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].name, "sci");
  EXPECT_EQ((*listed)[0].inventory, added->inventory);
  auto found = store.find("sci2");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->digest, added->digest);
  EXPECT_FALSE(store.find("nope").has_value());

  ASSERT_TRUE(store.remove("sci").has_value());
  EXPECT_TRUE(fs::exists(added->root)) << "still named by sci2";
  ASSERT_TRUE(store.remove("sci2").has_value());
  EXPECT_FALSE(fs::exists(added->root));
  EXPECT_FALSE(store.remove("sci2").has_value());
}

TEST(EnvironmentSelection, FlagsNameTheHostAStoredOneOrADirectory) {
  cordon::TempDir tmp = temp_dir();
  const fs::path source = make_tree(tmp.path() / "src");
  ::setenv(cordon::environment::kStoreEnv, (tmp.path() / "store").c_str(), 1);
  auto host = cordon::environment::select(std::nullopt, std::nullopt);
  ASSERT_TRUE(host.has_value());
  EXPECT_TRUE(host->is_host());
  EXPECT_EQ(host->name, "host");
  EXPECT_FALSE(cordon::environment::select("sci", std::nullopt).has_value());
  ASSERT_TRUE(Store(tmp.path() / "store").add("sci", source, nullptr).has_value());
  auto stored = cordon::environment::select("sci", std::nullopt);
  ASSERT_TRUE(stored.has_value()) << stored.error().describe();
  EXPECT_EQ(stored->digest, digest_of(source));
  ASSERT_TRUE(stored->inventory.has_value());
  auto loose = cordon::environment::select(std::nullopt, source.string() + "/");
  ASSERT_TRUE(loose.has_value());
  EXPECT_EQ(loose->name, "");
  EXPECT_EQ(loose->root, source.string());
  EXPECT_EQ(loose->digest, stored->digest);
  EXPECT_FALSE(cordon::environment::select("sci", source.string()).has_value());
  ::unsetenv(cordon::environment::kStoreEnv);
}

TEST(EnvironmentFsPlan, TheDistributionIsBoundFromTheEnvironmentsRoot) {
  cordon::policy::FsOptions o;
  o.system_root = "/srv/env";
  o.hide_usr_local = false;
  o.layout.top_level = {{"/lib", cordon::policy::HostEntry::Kind::kSymlink, "usr/lib"},
                        {"/lib64", cordon::policy::HostEntry::Kind::kDirectory, ""}};
  auto plan = cordon::policy::make_fs_plan(o);
  ASSERT_TRUE(plan.has_value());
  std::vector<std::string> binds;
  for (const auto& s : plan->steps) {
    if (s.op == cordon::policy::FsOp::kBind && !s.target.starts_with("/dev")) {
      binds.push_back(s.source + " -> " + s.target);
      EXPECT_TRUE(s.read_only && s.nosuid && s.nodev) << s.source;
    }
  }
  EXPECT_EQ(binds, (std::vector<std::string>{"/srv/env/usr -> /usr", "/srv/env/lib64 -> /lib64",
                                             "/srv/env/etc/ld.so.cache -> /etc/ld.so.cache",
                                             "/srv/env/etc/alternatives -> /etc/alternatives"}));
  o.system_root = "relative/env";
  EXPECT_FALSE(cordon::policy::make_fs_plan(o).has_value());
}

// The flags as every command reads them (cli/environment_command.h): a directory sets the
// backends' root and its digest and labels the runs; engine mode's image is neither pinned
// nor measured, so nothing is said or recorded about it.
TEST(EnvironmentFlags, TheyPinARootOrLeaveAnEnginesImageUnstated) {
  cordon::TempDir tmp = temp_dir();
  const fs::path source = make_tree(tmp.path() / "src");
  cordon::BackendOptions options;
  auto chosen =
      cordon::cli::apply_environment({.name = std::nullopt, .rootfs = source.string()}, options);
  ASSERT_TRUE(chosen.has_value()) << chosen.error().describe();
  EXPECT_EQ(options.system_root, source.string());
  EXPECT_EQ(options.system_root_digest, digest_of(source));
  EXPECT_EQ(cordon::cli::environment_ref(*chosen),
            (cordon::EnvironmentRef{.name = "", .digest = digest_of(source)}));

  cordon::BackendOptions host;
  chosen = cordon::cli::apply_environment({}, host);
  ASSERT_TRUE(chosen.has_value());
  EXPECT_FALSE(host.system_root.has_value());
  EXPECT_EQ(cordon::cli::environment_ref(*chosen),
            (cordon::EnvironmentRef{.name = "host", .digest = ""}));
  EXPECT_FALSE(cordon::environment::describe(*chosen, {}).empty());

  cordon::BackendOptions engine;
  engine.engine = "podman";
  engine.image = "debian:12";
  chosen = cordon::cli::apply_environment({}, engine);
  ASSERT_TRUE(chosen.has_value());
  EXPECT_FALSE(engine.system_root.has_value());
  EXPECT_EQ(cordon::cli::environment_ref(*chosen), std::nullopt);
  EXPECT_EQ(cordon::environment::describe(*chosen, cordon::environment::inventory_for(*chosen)),
            "");

  auto missing =
      cordon::cli::apply_environment({.name = std::nullopt, .rootfs = "/no/such/dir"}, options);
  ASSERT_FALSE(missing.has_value());
  EXPECT_TRUE(missing.error().describe().starts_with("--rootfs: ")) << missing.error().describe();
}

// ---- the real cordon ----

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs the cordon binary with `args`, stdout and stderr to files (small outputs).
Ran cordon(const std::vector<std::string>& args, const fs::path& scratch,
           const std::vector<std::string>& env = {}) {
  const fs::path out = scratch / "out.txt";
  const fs::path err = scratch / "err.txt";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int n = ::open("/dev/null", O_RDONLY);
    ::dup2(n, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    for (const std::string& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> argv = {const_cast<char*>(CORDON_CLI_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return Ran{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(out),
             slurp(err)};
}

// A scratch directory for trees a sandbox is shown, in /var/tmp (a tree below /tmp, over
// which the namespace backend assembles its root, has a test of its own below).
fs::path outside_tmp(const std::string& name) {
  return fs::path("/var/tmp") /
         ("cordon-environment-test-" + name + "-" + std::to_string(::getpid()));
}

class EnvironmentRun : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("runs the isolating backends as root");
    if (!cordon::testing::have_shell_environment()) {
      GTEST_SKIP() << "the shell environment is made from an x86_64 Debian host's files";
    }
    dir_ = outside_tmp(GetParam());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    tree_ = cordon::testing::make_shell_environment(dir_ / "tree");
    env_ = {"CORDON_ENVIRONMENTS_DIR=" + (dir_ / "store").string(),
            "CORDON_AUDIT_DIR=" + (dir_ / "audit").string()};
    Ran probe = cordon({"backends", "--json"}, dir_, env_);
    const json j = json::parse(probe.out, nullptr, false);
    bool available = false;
    if (j.is_object() && j.contains("plugins")) {
      for (const json& b : j["plugins"]) {
        if (b.value("name", "") == GetParam()) available = b.value("available", false);
      }
    }
    if (!available) CORDON_SKIP_OR_FAIL(GetParam() + " is not available here");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  fs::path tree_;
  std::vector<std::string> env_;
};

TEST_P(EnvironmentRun, TheCodeSeesTheEnvironmentsUsrAndTheResultRecordsItsDigest) {
  const std::string listing = "for f in /usr/bin/* /usr/lib/*; do echo $f; done";
  Ran ran = cordon({"run", "-b", GetParam(), "--rootfs", tree_.string(), "--json", "-c", listing},
                   dir_, env_);
  ASSERT_EQ(ran.status, 0) << ran.out << ran.err;
  const json result = json::parse(ran.out);
  EXPECT_EQ(result["stdout"], "/usr/bin/dash\n/usr/bin/sh\n/usr/lib/x86_64-linux-gnu\n");
  EXPECT_EQ(result["environment"]["name"], "");
  EXPECT_EQ(result["environment"]["digest"], digest_of(tree_));

  // Stored, then named: the same tree, its name in the result.
  Ran added = cordon({"environment", "add", "tiny", tree_.string()}, dir_, env_);
  ASSERT_EQ(added.status, 0) << added.out << added.err;
  EXPECT_NE(added.out.find("digest: " + digest_of(tree_)), std::string::npos) << added.out;
  ran =
      cordon({"run", "-b", GetParam(), "--environment", "tiny", "--json", "-c", "echo hi > /usr/x"},
             dir_, env_);
  const json failed = json::parse(ran.out);
  EXPECT_EQ(failed["outcome"], "failed") << ran.out;  // read-only
  EXPECT_EQ(failed["environment"]["name"], "tiny");
  EXPECT_EQ(failed["environment"]["digest"], digest_of(tree_));

  // The host's python is not there: refused with the reason, not run on the host's.
  ran = cordon(
      {"run", "-b", GetParam(), "--environment", "tiny", "--json", "-l", "python", "-c", "pass"},
      dir_, env_);
  EXPECT_NE(ran.status, 0);
  EXPECT_NE(ran.out.find("python3 not found"), std::string::npos) << ran.out << ran.err;

  // The plan shows where /usr comes from.
  ran = cordon({"plan", "-b", GetParam(), "--environment", "tiny", "--json"}, dir_, env_);
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_NE(ran.out.find(digest_of(tree_).substr(7)), std::string::npos) << ran.out;
}

// A tree below /tmp, directly or through a symlink into it: the namespace backend assembles
// its root on a tmpfs over /tmp, which once hid such a tree from its binds (it refused the
// first and, for the second, bound whatever the tmpfs had at that path). It now holds every
// bind source open from before that tmpfs exists.
TEST_P(EnvironmentRun, ATreeBelowTmpOrReachedThroughALinkIntoItIsShown) {
  const fs::path under_tmp =
      fs::path("/tmp") / ("cordon-environment-test-tmp-" + std::to_string(::getpid()));
  fs::remove_all(under_tmp);
  fs::create_directories(under_tmp);
  const cordon::ScopeExit cleanup([&] {
    std::error_code ec;
    fs::remove_all(under_tmp, ec);
  });
  const fs::path tree = cordon::testing::make_shell_environment(under_tmp / "tree");
  fs::create_symlink(under_tmp, dir_ / "link");
  for (const fs::path& root : {tree, dir_ / "link/tree"}) {
    const Ran ran = cordon(
        {"run", "-b", GetParam(), "--rootfs", root.string(), "--json", "-c",
         "for f in /usr/bin/*; do echo $f; done; echo ok > /tmp/w; read w < /tmp/w; echo $w"},
        dir_, env_);
    ASSERT_EQ(ran.status, 0) << root << "\n" << ran.out << ran.err;
    const json result = json::parse(ran.out);
    EXPECT_EQ(result["stdout"], "/usr/bin/dash\n/usr/bin/sh\nok\n") << root;
    EXPECT_EQ(result["environment"]["digest"], digest_of(tree)) << root;
  }
}

TEST_P(EnvironmentRun, NoBackendRunsItWithLessIsolationAndNoReportBacksAnotherEnvironment) {
  // subprocess cannot show an environment: it is unavailable, and auto passes it by.
  Ran ran =
      cordon({"run", "-b", "subprocess", "--rootfs", tree_.string(), "-c", "true"}, dir_, env_);
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("cannot run in an environment"), std::string::npos) << ran.err;
  ran = cordon({"run", "--environment", "missing", "-c", "true"}, dir_, env_);
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("no environment named 'missing'"), std::string::npos) << ran.err;
  // The filesystem claim states the digest, so the policy hash (and every audit report and
  // description bound to it) differs from the host's.
  const auto claim_of = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"plan", "-b", GetParam(), "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    Ran plan = cordon(args, dir_, env_);
    EXPECT_EQ(plan.status, 0) << plan.err;
    return plan.out;
  };
  const std::string pinned = "\"" + digest_of(tree_) + "\"";
  EXPECT_EQ(claim_of({}).find(pinned), std::string::npos);
  EXPECT_NE(claim_of({"--rootfs", tree_.string()}).find(pinned), std::string::npos);
}

// A tree below a directory other users cannot enter (here 0700, as /root or a temporary
// directory is): as root the namespace backend binds it as the sandbox's own host uid, so it
// refuses it up front, naming that directory, instead of failing every run at a mount; the
// container backend's runtime binds as root and shows it.
TEST_P(EnvironmentRun, ATreeOtherUsersCannotReachIsRefusedWithTheReasonOrShown) {
  const fs::path closed = dir_ / "closed";
  const fs::path tree = cordon::testing::make_shell_environment(closed / "tree");
  fs::permissions(closed, fs::perms::owner_all);
  const Ran ran =
      cordon({"run", "-b", GetParam(), "--rootfs", tree.string(), "-c", "echo shown"}, dir_, env_);
  if (GetParam() == "namespace") {
    EXPECT_EQ(ran.status, 125) << ran.out << ran.err;
    EXPECT_NE(ran.err.find(closed.string() + " does not let other users through"),
              std::string::npos)
        << ran.err;
  } else {
    EXPECT_EQ(ran.status, 0) << ran.out << ran.err;
    EXPECT_EQ(ran.out, "shown\n");
  }
}

// `cordon environment add NAME IMAGE`: an image podman holds (here one imported from the
// shell environment's tree: nothing can be pulled) is added as its root filesystem, with the
// same digest as that tree, its name and id as source, and podman's mount of it undone.
TEST(EnvironmentImage, AnImagePodmanHoldsIsAddedAsItsRootFilesystem) {
  if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("podman mounts an image's root filesystem as root");
  if (!fs::exists("/usr/bin/podman")) CORDON_SKIP_OR_FAIL("podman is not installed");
  if (!cordon::testing::have_shell_environment()) {
    GTEST_SKIP() << "the shell environment is made from an x86_64 Debian host's files";
  }
  const fs::path dir = outside_tmp("image");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string image = "localhost/cordon-environment-test:" + std::to_string(::getpid());
  const cordon::ScopeExit cleanup([&] {
    (void)std::system(("podman rmi -f " + image + " >/dev/null 2>&1").c_str());
    std::error_code ec;
    fs::remove_all(dir, ec);
  });
  const fs::path tree = cordon::testing::make_shell_environment(dir / "tree");
  ASSERT_EQ(std::system(("tar -C " + tree.string() + " -cf - . | podman import --quiet - " + image +
                         " >/dev/null")
                            .c_str()),
            0);
  const std::vector<std::string> env = {"CORDON_ENVIRONMENTS_DIR=" + (dir / "store").string()};

  Ran ran = cordon({"environment", "add", "img", image}, dir, env);
  ASSERT_EQ(ran.status, 0) << ran.out << ran.err;
  EXPECT_NE(ran.out.find("digest: " + digest_of(tree)), std::string::npos) << ran.out;
  ran = cordon({"environment", "list", "--json"}, dir, env);
  const json listed = json::parse(ran.out);
  ASSERT_EQ(listed.size(), 2U) << ran.out;
  EXPECT_TRUE(
      listed[1]["source"].get<std::string>().starts_with("image " + image + " (podman, id sha256:"))
      << listed[1]["source"];
  // podman's mount of the image was undone.
  std::string mounts;
  if (FILE* p = ::popen("podman image mount", "r")) {
    for (int c = 0; (c = std::fgetc(p)) != EOF;) mounts += static_cast<char>(c);
    ::pclose(p);
  }
  EXPECT_EQ(mounts.find(image), std::string::npos) << mounts;

  ran = cordon(
      {"run", "--environment", "img", "--json", "-c", "for f in /usr/bin/*; do echo $f; done"}, dir,
      env);
  ASSERT_EQ(ran.status, 0) << ran.out << ran.err;
  EXPECT_EQ(json::parse(ran.out)["stdout"], "/usr/bin/dash\n/usr/bin/sh\n");

  // Nothing is pulled: a name podman does not hold is refused with the way out.
  ran = cordon({"environment", "add", "other", "localhost/cordon-no-such-image:1"}, dir, env);
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("nothing is pulled"), std::string::npos) << ran.err;
}

INSTANTIATE_TEST_SUITE_P(Backends, EnvironmentRun, ::testing::Values("namespace", "container"),
                         [](const auto& p) { return p.param; });

// Environments built from Debian packages (scripts/build-environment.sh, which CI builds or
// takes from its cache; CORDON_TEST_ENVIRONMENT_DIR names it), stored as "debian" in a store
// of the test's own.
class DebianEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("runs the namespace backend as root");
    const char* built = std::getenv("CORDON_TEST_ENVIRONMENT_DIR");
    if (built == nullptr || !fs::is_directory(built)) {
      CORDON_SKIP_OR_FAIL(
          "no environment built from Debian packages: set CORDON_TEST_ENVIRONMENT_DIR "
          "(scripts/build-environment.sh --ci prints it)");
    }
    dir_ = outside_tmp(::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    env_ = {"CORDON_ENVIRONMENTS_DIR=" + (dir_ / "store").string(),
            "CORDON_AUDIT_DIR=" + (dir_ / "audit").string()};
    Ran added = cordon({"environment", "add", "debian", built}, dir_, env_);
    ASSERT_EQ(added.status, 0) << added.out << added.err;
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  // The MCP description of `name`'s tool, claims unproven unless a stored report backs them.
  std::string description(const std::string& name) {
    Ran prompt = cordon({"prompt", "-b", "namespace", "--environment", name, "--no-audit",
                         "--unverified", "-f", "mcp"},
                        dir_, env_);
    EXPECT_EQ(prompt.status, 0) << prompt.err;
    const json tool = json::parse(prompt.out, nullptr, false);
    return tool.is_object() ? tool.value("description", std::string()) : std::string();
  }
  fs::path dir_;
  std::vector<std::string> env_;
};

// The issue's test: the descriptions of two environments (the host's and one built from
// Debian packages) name Python packages, and each named one is installed at that version and
// imports inside its environment.
TEST_F(DebianEnvironment, EveryPackageADescriptionNamesImportsInside) {
  for (const std::string name : {"host", "debian"}) {
    const std::string text = description(name);
    const std::string head = "Python packages beyond the standard library: ";
    const auto from = text.find(head);
    ASSERT_NE(from, std::string::npos) << name << ": " << text;
    const auto to = text.find("; no others are installed.", from);
    ASSERT_NE(to, std::string::npos) << text;
    // "six 1.16.0, PyYAML 6.0" -> a python check of each: installed at that version (its
    // own metadata, as Python sees it) and one of its top-level modules imports.
    std::string checks = "import importlib, importlib.metadata as m\nbad = []\n";
    std::stringstream list(text.substr(from + head.size(), to - from - head.size()));
    int named = 0;
    for (std::string item; std::getline(list, item, ',');) {
      item.erase(0, item.find_first_not_of(' '));
      const auto space = item.rfind(' ');
      ASSERT_NE(space, std::string::npos) << item;
      const std::string pkg = item.substr(0, space);
      const std::string version = item.substr(space + 1);
      checks += "d = m.distribution('" + pkg + "')\n" + "if d.version != '" + version +
                "': bad.append(('" + pkg + "', d.version))\n" +
                "tops = (d.read_text('top_level.txt') or '').split() or ['" + pkg + "']\n" +
                "ok = False\nfor t in tops:\n    try:\n        importlib.import_module(t)\n"
                "        ok = True\n        break\n    except Exception:\n        pass\n"
                "if not ok: bad.append(('" +
                pkg + "', 'no module imports'))\n";
      ++named;
    }
    EXPECT_GT(named, 0) << name;
    checks += "print(bad)\n";
    const fs::path script = dir_ / "check.py";
    std::ofstream(script) << checks;
    Ran run = cordon({"run", "-b", "namespace", "--environment", name, "-t", "60s", "-l", "python",
                      script.string()},
                     dir_, env_);
    EXPECT_EQ(run.status, 0) << name << ": " << run.err;
    EXPECT_EQ(run.out, "[]\n") << name << ": " << run.out << run.err;
  }
}

// Audit reports and the prompt's gate are bound to the environment's digest: an audit in an
// environment attacks the sandbox as it is there (every claim held), its report backs the
// description of that environment, and nothing else: the host's description stays unproven.
TEST_F(DebianEnvironment, AnAuditInAnEnvironmentBacksOnlyItsDescription) {
  Ran audit = cordon({"audit", "-b", "namespace", "--environment", "debian", "--json"}, dir_, env_);
  ASSERT_EQ(audit.status, 0) << audit.out.substr(0, 4000) << audit.err;
  const json reports = json::parse(audit.out)["reports"];
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0]["escaped_claims"], 0);
  EXPECT_TRUE(reports[0]["complete"].get<bool>());

  // The environment's description stands on that report, without auditing again ...
  const std::string in_env = description("debian");
  EXPECT_EQ(in_env.find("[unverified]"), std::string::npos) << in_env;
  EXPECT_NE(in_env.find("The code runs in the environment 'debian'"), std::string::npos);
  // ... and the host's does not: another digest, another policy hash, no report.
  const std::string on_host = description("host");
  EXPECT_NE(on_host.find("[unverified]"), std::string::npos) << on_host;
}

}  // namespace
