// cordon-ns-spawner (backends/namespace/setup_spawner.h): the set-up plan's encoding, and
// sandboxes whose set-up process the helper cloned. The whole namespace suite also runs
// through the helper (namespace_backend_test_pooled: a pool turns it on); these tests pin
// what is particular to it: the set-up process is a clone of the helper and still
// cordon's child, a helper that dies is replaced, and none outlives its backend.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "child_plan_wire.h"
#include "kernel_features.h"
#include "namespace_backend.h"
#include "prebuilt_seccomp.h"
#include "proc_test_support.h"
#include "sandbox_plan.h"

namespace cordon::ns {
namespace {

namespace fs = std::filesystem;

// --- the plan's encoding, on a real plan (no privileges needed) ---

struct Prepared {
  RunRequest req;
  SandboxPlan plan;
  policy::SeccompProgram seccomp;
  std::unique_ptr<PreparedChild> child;
};

std::unique_ptr<Prepared> prepared_plan() {
  auto p = std::make_unique<Prepared>();
  p->req.code = "echo hi";
  // Bytes that are not text, a NUL among them: data travels with its length.
  p->req.input_files["data.bin"] = std::string("a\0b\xff", 4);
  PlanInputs in;
  in.request = &p->req;
  in.layout.top_level = {{"/bin", policy::HostEntry::Kind::kSymlink, "usr/bin"}};
  in.host = {false, 1000, 1000};
  in.policy_name = "cordon-default";
  auto plan = make_sandbox_plan(in);
  EXPECT_TRUE(plan) << plan.error().describe();
  if (!plan) return nullptr;
  p->plan = std::move(*plan);
  auto program = default_seccomp_program();
  EXPECT_TRUE(program) << program.error().describe();
  if (!program) return nullptr;
  p->seccomp = std::move(*program);
  PreparedChild::Fds fds;
  const int join[2] = {7, 8};
  fds.join = join;
  fds.join_count = 2;
  auto child = PreparedChild::make(p->plan, &p->seccomp, fds, /*want_tmp_fd=*/true);
  EXPECT_TRUE(child) << child.error().describe();
  if (!child) return nullptr;
  p->child = std::move(*child);
  return p;
}

std::string or_null(const char* s) { return s == nullptr ? "(null)" : s; }

TEST(ChildPlanWire, ARealPlanComesBackWhole) {
  auto p = prepared_plan();
  ASSERT_TRUE(p);
  const ChildPlan& a = *p->child->plan();
  const std::string bytes = encode_child_plan(a, p->plan.clone_flags);
  DecodedChildPlan d;
  ASSERT_EQ(decode_child_plan(bytes, d), nullptr);
  const ChildPlan& b = d.plan;
  EXPECT_EQ(d.clone_flags, p->plan.clone_flags);
  EXPECT_EQ(std::string(b.hostname, b.hostname_len), std::string(a.hostname, a.hostname_len));
  EXPECT_EQ(b.join_fd_count, 2u);
  EXPECT_EQ(b.go_fd, -1);  // fds travel beside the bytes
  EXPECT_EQ(b.uid, a.uid);
  EXPECT_EQ(b.gid, a.gid);
  EXPECT_EQ(b.cap_last, a.cap_last);
  EXPECT_EQ(b.loopback_up, a.loopback_up);
  EXPECT_EQ(b.clear_groups, a.clear_groups);
  EXPECT_EQ(b.drop_capabilities, a.drop_capabilities);
  EXPECT_TRUE(b.send_tmp_fd);
  ASSERT_EQ(b.seccomp_count, p->seccomp.instructions.size());
  EXPECT_EQ(std::memcmp(b.seccomp_filter, p->seccomp.instructions.data(),
                        b.seccomp_count * sizeof(sock_filter)),
            0);
  EXPECT_STREQ(b.init_argv[0], "cordon-init");
  EXPECT_STREQ(b.init_argv[1], "ns");
  EXPECT_EQ(b.init_argv[2], nullptr);
  EXPECT_EQ(b.init_envp[0], nullptr);
  ASSERT_EQ(b.mount_count, a.mount_count);
  bool saw_binary = false;
  for (std::size_t i = 0; i < a.mount_count; ++i) {
    const ChildMount& x = a.mounts[i];
    const ChildMount& y = b.mounts[i];
    SCOPED_TRACE(or_null(x.target));
    EXPECT_EQ(x.op, y.op);
    EXPECT_EQ(x.mode, y.mode);
    EXPECT_EQ(x.flags, y.flags);
    EXPECT_EQ(x.read_only, y.read_only);
    EXPECT_EQ(x.optional, y.optional);
    EXPECT_EQ(or_null(x.target), or_null(y.target));
    EXPECT_EQ(or_null(x.source), or_null(y.source));
    ASSERT_EQ(x.data == nullptr, y.data == nullptr);
    if (x.data != nullptr) {
      EXPECT_EQ(std::string(x.data, x.data_len), std::string(y.data, y.data_len));
      saw_binary = saw_binary || std::string(y.data, y.data_len) == std::string("a\0b\xff", 4);
    }
  }
  EXPECT_TRUE(saw_binary) << "the input file's bytes did not come through";
}

TEST(ChildPlanWire, DamagedBytesAreRefusedNeverRead) {
  auto p = prepared_plan();
  ASSERT_TRUE(p);
  const std::string bytes = encode_child_plan(*p->child->plan(), p->plan.clone_flags);
  DecodedChildPlan d;
  // Every truncation (the size in the header no longer matches).
  for (std::size_t n = 0; n < bytes.size(); n += 7) {
    const std::string cut = bytes.substr(0, n);
    EXPECT_NE(decode_child_plan(cut, d), nullptr) << n;
  }
  auto damaged = [&](std::size_t at, std::uint32_t value) {
    std::string b = bytes;
    std::memcpy(b.data() + at, &value, sizeof(value));
    return b;
  };
  EXPECT_STREQ(decode_child_plan(damaged(0, 0), d), "not a set-up plan");
  EXPECT_STREQ(decode_child_plan(damaged(4, kChildPlanVersion + 1), d),
               "a set-up plan of another version");
  // The first mount record starts after the 64-byte header: its op, then its target offset.
  EXPECT_STREQ(decode_child_plan(damaged(64, 999), d), "unknown mount step");
  EXPECT_STREQ(decode_child_plan(damaged(64 + 16, static_cast<std::uint32_t>(bytes.size())), d),
               "mount target outside the plan");
  // An unaligned copy is refused rather than read with a misaligned filter pointer.
  std::string shifted = " " + bytes;
  EXPECT_STREQ(decode_child_plan(std::string_view(shifted).substr(1), d), "not 8-byte aligned");
}

// The fuzz target's seed (tests/fuzz/corpus/child_plan_wire/plan) is this encoding of a real
// plan; it must keep decoding. CORDON_WRITE_FUZZ_SEED=1 rewrites it (after a format change).
TEST(ChildPlanWire, TheFuzzSeedIsARealPlan) {
  const fs::path seed =
      fs::path(CORDON_TEST_SOURCE_DIR) / "fuzz" / "corpus" / "child_plan_wire" / "plan";
  if (const char* w = std::getenv("CORDON_WRITE_FUZZ_SEED"); w != nullptr && w[0] == '1') {
    auto p = prepared_plan();
    ASSERT_TRUE(p);
    fs::create_directories(seed.parent_path());
    std::ofstream(seed, std::ios::binary)
        << encode_child_plan(*p->child->plan(), p->plan.clone_flags);
  }
  std::ifstream in(seed, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty()) << seed;
  DecodedChildPlan d;
  EXPECT_EQ(decode_child_plan(bytes, d), nullptr);
}

// --- sandboxes through the helper (root or user namespaces) ---

std::atomic<pid_t> g_setup_parent{0};
std::atomic<bool> g_setup_is_spawner_clone{false};

// NamespaceOptions::before_go_for_test: who the set-up process's parent is, and whose
// image it still runs (a clone runs its parent's until it execs the init).
void record_setup(pid_t setup) {
  const std::string stat =
      testing::read_file("/proc/" + std::to_string(setup) + "/stat").value_or("");
  const auto close = stat.rfind(')');
  pid_t ppid = 0;
  if (close != std::string::npos) {
    char state = 0;
    std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid);
  }
  g_setup_parent = ppid;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/" + std::to_string(setup) + "/exe", ec);
  g_setup_is_spawner_clone = exe.filename() == "cordon-ns-spawner";
}

NamespaceOptions spawner_options(NamespaceOptions::Spawner use) {
  NamespaceOptions o;
  o.setup_spawner = use;
  o.before_go_for_test = &record_setup;
  return o;
}

RunRequest echo(const std::string& text) {
  RunRequest req;
  req.language = Language::kBash;
  req.code = "echo " + text;
  return req;
}

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

TEST(SetupSpawner, TheSetUpProcessIsTheHelpersCloneAndCordonsChild) {
  NamespaceBackend backend(spawner_options(NamespaceOptions::Spawner::kAlways));
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  g_setup_parent = 0;
  const RunResult r = backend.run(echo("through-the-helper"), {}, nullptr);
  ASSERT_EQ(r.outcome, Outcome::kOk) << (r.error ? *r.error : r.stderr_data);
  EXPECT_EQ(r.stdout_data, "through-the-helper\n");
  EXPECT_GT(backend.spawner_pid(), 0);
  // CLONE_PARENT: cordon's child, although the helper cloned it.
  EXPECT_EQ(g_setup_parent.load(), ::getpid());
  EXPECT_TRUE(g_setup_is_spawner_clone.load()) << "the set-up process is not a clone of the helper";
}

TEST(SetupSpawner, WithoutItThisProcessClonesAsBefore) {
  NamespaceBackend backend(spawner_options(NamespaceOptions::Spawner::kNever));
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  const RunResult r = backend.run(echo("direct"), {}, nullptr);
  ASSERT_EQ(r.outcome, Outcome::kOk) << (r.error ? *r.error : r.stderr_data);
  EXPECT_EQ(backend.spawner_pid(), -1);
  EXPECT_EQ(g_setup_parent.load(), ::getpid());
  EXPECT_FALSE(g_setup_is_spawner_clone.load());
}

TEST(SetupSpawner, AHelperThatDiedIsReplacedAndNoneOutlivesTheBackend) {
  pid_t second = -1;
  {
    NamespaceBackend backend(spawner_options(NamespaceOptions::Spawner::kAlways));
    if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
    ASSERT_EQ(backend.run(echo("one"), {}, nullptr).outcome, Outcome::kOk);
    const pid_t first = backend.spawner_pid();
    ASSERT_GT(first, 0);
    ASSERT_EQ(::kill(first, SIGKILL), 0);
    // Until its keeper reaps it, it is a zombie: the next builds must not wait on it.
    for (int i = 0; i < 3; ++i) {
      const RunResult r = backend.run(echo("again"), {}, nullptr);
      ASSERT_EQ(r.outcome, Outcome::kOk) << i << ": " << (r.error ? *r.error : r.stderr_data);
      EXPECT_EQ(r.stdout_data, "again\n");
    }
    second = backend.spawner_pid();
    EXPECT_GT(second, 0);
    EXPECT_NE(second, first);
    EXPECT_TRUE(g_setup_is_spawner_clone.load());
  }
  // The backend reaped its helper: no such process any more.
  EXPECT_FALSE(process_exists(second));
}

// With a pool (the default for `cordon mcp`), the helper is on without being asked.
TEST(SetupSpawner, APoolTurnsItOn) {
  NamespaceOptions o;
  o.pool_size = 1;
  o.before_go_for_test = &record_setup;
  NamespaceBackend backend(o);
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  const RunResult r = backend.run(echo("pooled"), {}, nullptr);
  ASSERT_EQ(r.outcome, Outcome::kOk) << (r.error ? *r.error : r.stderr_data);
  EXPECT_GT(backend.spawner_pid(), 0);
  EXPECT_TRUE(g_setup_is_spawner_clone.load());
}

}  // namespace
}  // namespace cordon::ns
