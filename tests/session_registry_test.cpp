// The session registry (frontend/session_registry.h) against a fake backend: ids, owners,
// the cap, one call at a time with a bounded queue, expiry, and closing.
#include "frontend/session_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace cordon::frontend {
namespace {

using namespace std::chrono_literals;

// What every fake session of one backend shares: counts and a gate a call can block on.
struct Shared {
  std::atomic<int> opened{0};
  std::atomic<int> destroyed{0};
  std::atomic<int> running{0};
  std::atomic<int> most_running{0};
  std::mutex mu;
  std::condition_variable cv;
  bool open_gate = false;
  int entered = 0;  // calls that reached the gate

  void release() {
    const std::scoped_lock lock(mu);
    open_gate = true;
    cv.notify_all();
  }
  // Waits (bounded) until `n` calls reached the gate.
  bool wait_entered(int n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, 30s, [&] { return entered >= n; });
  }
};

class FakeSession final : public BackendSession {
 public:
  explicit FakeSession(Shared& shared) : shared_(shared) { ++shared_.opened; }
  ~FakeSession() override { ++shared_.destroyed; }
  RunResult run(const RunRequest& request, const CancelToken& /*cancel*/,
                RunObserver* /*observer*/) override {
    const int now = ++shared_.running;
    int most = shared_.most_running.load();
    while (now > most && !shared_.most_running.compare_exchange_weak(most, now)) {
    }
    if (request.code == "block") {
      std::unique_lock lock(shared_.mu);
      ++shared_.entered;
      shared_.cv.notify_all();
      shared_.cv.wait_for(lock, 60s, [&] { return shared_.open_gate; });
    }
    --shared_.running;
    // Its sandbox dies during the call, out of memory or otherwise.
    if (request.code == "die-oom") loss_ = SessionLoss{.oom = true, .reason = "init OOM-killed"};
    if (request.code == "die") loss_ = SessionLoss{.oom = false, .reason = "init died"};
    RunResult result;
    result.value = request.code;
    return result;
  }
  std::optional<SessionLoss> loss() override { return loss_; }
  Status reset() override { return {}; }
  SessionStats stats() override {
    SessionStats stats;
    stats.interpreter_alive = true;
    return stats;
  }
  Result<std::vector<WorkspaceEntry>> list_files(std::string_view /*dir*/) override {
    return std::vector<WorkspaceEntry>{{"a.txt", false, 3}};
  }
  Result<std::string> read_file(std::string_view /*path*/, std::uint64_t max_bytes) override {
    const std::string content(100, 'x');
    if (content.size() > max_bytes) {
      return fail(ErrorCode::kInvalidArgument,
                  "a.txt: " + std::to_string(content.size()) + " bytes, over the limit");
    }
    return content;
  }
  Status write_file(std::string_view /*path*/, std::string_view /*bytes*/) override { return {}; }

 private:
  std::optional<SessionLoss> loss_;
  Shared& shared_;
};

class FakeBackend final : public Backend {
 public:
  explicit FakeBackend(Shared& shared, bool refuse = false) : shared_(shared), refuse_(refuse) {}
  [[nodiscard]] std::string_view name() const override { return "fake"; }
  [[nodiscard]] std::string_view version() const override { return "1"; }
  [[nodiscard]] Probe probe() const override { return {true, ""}; }
  [[nodiscard]] Capabilities capabilities(const Limits& /*limits*/) const override { return {}; }
  [[nodiscard]] RunResult run(const RunRequest& /*request*/, const CancelToken& /*cancel*/,
                              RunObserver* /*observer*/) override {
    return {};
  }
  [[nodiscard]] Result<std::unique_ptr<BackendSession>> open_session(
      const SessionOptions& /*options*/) override {
    if (refuse_) return fail(ErrorCode::kUnavailable, "fake cannot keep sessions apart");
    return std::make_unique<FakeSession>(shared_);
  }

 private:
  Shared& shared_;
  bool refuse_;
};

template <typename Set>
SessionRegistryOptions options(Set set) {
  SessionRegistryOptions o;
  set(o);
  return o;
}

RunRequest code(std::string text) {
  RunRequest request;
  request.code = std::move(text);
  return request;
}

// Polls (bounded, generous: a loaded 2-core machine) until `pred` holds.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds bound = 20s) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

TEST(SessionRegistry, IdsAre32HexCharsAndDistinct) {
  Shared shared;
  FakeBackend backend(shared);
  SessionRegistry registry;
  std::set<std::string> ids;
  for (int i = 0; i < 10; ++i) {
    auto id = registry.open(backend, {}, "alice");
    ASSERT_TRUE(id) << id.error().message;
    ASSERT_EQ(id->size(), 32U);
    EXPECT_EQ(id->find_first_not_of("0123456789abcdef"), std::string::npos) << *id;
    ids.insert(*id);
  }
  EXPECT_EQ(ids.size(), 10U);
}

TEST(SessionRegistry, BackendRefusalPassesThrough) {
  Shared shared;
  FakeBackend backend(shared, /*refuse=*/true);
  SessionRegistry registry;
  auto id = registry.open(backend, {}, "alice");
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().message, "fake cannot keep sessions apart");
}

TEST(SessionRegistry, AnotherOwnerGetsNoSuchSession) {
  Shared shared;
  FakeBackend backend(shared);
  SessionRegistry registry;
  auto id = registry.open(backend, {}, "alice");
  ASSERT_TRUE(id);
  auto theirs = registry.run(*id, "mallory", code("x"), {}, nullptr);
  ASSERT_FALSE(theirs);
  auto unknown = registry.run(std::string(32, '0'), "mallory", code("x"), {}, nullptr);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(theirs.error().message, "no such session");
  EXPECT_EQ(theirs.error().message, unknown.error().message);
  EXPECT_EQ(theirs.error().code, unknown.error().code);
  EXPECT_FALSE(registry.close(*id, "mallory"));
  EXPECT_FALSE(registry.read_file(*id, "mallory", "a.txt", 1000));
  EXPECT_TRUE(registry.list("mallory").empty());
  EXPECT_TRUE(registry.holds(*id, "alice"));
  EXPECT_FALSE(registry.holds(*id, "mallory"));
  // Closed by its owner: mallory still learns nothing.
  ASSERT_TRUE(registry.close(*id, "alice"));
  EXPECT_FALSE(registry.holds(*id, "alice"));
  auto after = registry.run(*id, "mallory", code("x"), {}, nullptr);
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().message, "no such session");
  auto own = registry.run(*id, "alice", code("x"), {}, nullptr);
  ASSERT_FALSE(own);
  EXPECT_NE(own.error().message.find("was closed"), std::string::npos) << own.error().message;
}

TEST(SessionRegistry, CapRefusesAndEvictsNobody) {
  Shared shared;
  FakeBackend backend(shared);
  SessionRegistry registry;
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(registry.open(backend, {}, "o" + std::to_string(i)));
  auto over = registry.open(backend, {}, "late");
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().message,
            "32 sessions are open, the most this server holds (--max-sessions); close one first");
  EXPECT_EQ(shared.destroyed.load(), 0);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(registry.list("o" + std::to_string(i)).size(), 1U);
}

TEST(SessionRegistry, CallsAreSerialisedAndIndexed) {
  Shared shared;
  FakeBackend backend(shared);
  SessionRegistry registry;
  auto id = registry.open(backend, {}, "alice");
  ASSERT_TRUE(id);
  auto first = std::async(std::launch::async,
                          [&] { return registry.run(*id, "alice", code("block"), {}, nullptr); });
  ASSERT_TRUE(shared.wait_entered(1));
  auto second = std::async(std::launch::async,
                           [&] { return registry.run(*id, "alice", code("block"), {}, nullptr); });
  // The second waits: it does not reach the backend while the first runs.
  EXPECT_EQ(second.wait_for(300ms), std::future_status::timeout);
  EXPECT_EQ(shared.entered, 1);
  shared.release();
  auto r1 = first.get();
  auto r2 = second.get();
  ASSERT_TRUE(r1);
  ASSERT_TRUE(r2);
  EXPECT_EQ(shared.most_running.load(), 1);
  ASSERT_TRUE(r1->session && r2->session);
  EXPECT_EQ(r1->session->id, *id);
  EXPECT_EQ(r1->session->call, 1);
  EXPECT_EQ(r2->session->call, 2);
  auto r3 = registry.run(*id, "alice", code("x"), {}, nullptr);
  ASSERT_TRUE(r3);
  EXPECT_EQ(r3->session->call, 3);
}

TEST(SessionRegistry, FullQueueRefusesAsBusyAndCancelledWaiterLeaves) {
  Shared shared;
  FakeBackend backend(shared);
  SessionRegistry registry(options([](SessionRegistryOptions& o) { o.max_waiting = 1; }));
  auto id = registry.open(backend, {}, "alice");
  ASSERT_TRUE(id);
  auto first = std::async(std::launch::async,
                          [&] { return registry.run(*id, "alice", code("block"), {}, nullptr); });
  ASSERT_TRUE(shared.wait_entered(1));
  CancelSource cancel;
  auto waiter = std::async(std::launch::async, [&] {
    return registry.run(*id, "alice", code("x"), cancel.token(), nullptr);
  });
  ASSERT_TRUE(eventually([&] {
    auto listed = registry.list("alice");
    return listed.size() == 1 && listed[0].waiting == 1;
  }));
  auto busy = registry.run(*id, "alice", code("x"), {}, nullptr);
  ASSERT_FALSE(busy);
  EXPECT_NE(busy.error().message.find("1 more wait"), std::string::npos) << busy.error().message;
  cancel.cancel();
  auto left = waiter.get();
  ASSERT_FALSE(left);
  EXPECT_NE(left.error().message.find("cancelled"), std::string::npos) << left.error().message;
  // It left the queue: another call may wait now.
  auto again = std::async(std::launch::async,
                          [&] { return registry.run(*id, "alice", code("x"), {}, nullptr); });
  EXPECT_EQ(again.wait_for(200ms), std::future_status::timeout);
  shared.release();
  ASSERT_TRUE(first.get());
  auto ran = again.get();
  ASSERT_TRUE(ran) << ran.error().message;
  EXPECT_EQ(ran->session->call, 2);
}

TEST(SessionRegistry, IdleExpiryIsReportedToItsOwner) {
  Shared shared;
  FakeBackend backend(shared);
  SessionRegistry registry(options([](SessionRegistryOptions& o) { o.idle_timeout = 200ms; }));
  auto id = registry.open(backend, {}, "alice");
  ASSERT_TRUE(id);
  ASSERT_TRUE(eventually([&] { return shared.destroyed.load() == 1; }));
  auto late = registry.run(*id, "alice", code("x"), {}, nullptr);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().message, "session " + id->substr(0, 8) + "… ended after 200 ms idle");
  auto foreign = registry.run(*id, "mallory", code("x"), {}, nullptr);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().message, "no such session");
}

// A session whose sandbox died ends at once with why (issue #41: what ends a session is
// recorded), freeing its place under the cap; the call that saw it keeps its result.
TEST(SessionRegistry, ASandboxThatDiedEndsItsSessionSayingWhy) {
  Shared shared;
  FakeBackend backend(shared);
  SessionRegistry registry(options([](SessionRegistryOptions& o) { o.max_sessions = 1; }));
  for (const auto& [code_text, said] :
       {std::pair<std::string, std::string>{"die-oom", "ended out of memory: init OOM-killed"},
        std::pair<std::string, std::string>{"die", "ended: init died"}}) {
    auto id = registry.open(backend, {}, "alice");
    ASSERT_TRUE(id) << id.error().message;
    auto fine = registry.run(*id, "alice", code("x"), {}, nullptr);
    ASSERT_TRUE(fine);
    auto dying = registry.run(*id, "alice", code(code_text), {}, nullptr);
    ASSERT_TRUE(dying) << dying.error().message;
    EXPECT_EQ(dying->value, code_text);
    auto late = registry.run(*id, "alice", code("x"), {}, nullptr);
    ASSERT_FALSE(late);
    EXPECT_EQ(late.error().message, "session " + id->substr(0, 8) + "… " + said);
    EXPECT_TRUE(registry.list("alice").empty());
  }
  EXPECT_EQ(shared.destroyed.load(), 2);
}

TEST(SessionRegistry, MaxAgeEndsAUsedSession) {
  Shared shared;
  FakeBackend backend(shared);
  SessionRegistry registry(options([](SessionRegistryOptions& o) { o.max_age = 500ms; }));
  auto id = registry.open(backend, {}, "alice");
  ASSERT_TRUE(id);
  // Kept busy with calls: idle never fires, the age does.
  ASSERT_TRUE(eventually([&] { return !registry.run(*id, "alice", code("x"), {}, nullptr); }));
  auto late = registry.run(*id, "alice", code("x"), {}, nullptr);
  ASSERT_FALSE(late);
  EXPECT_NE(late.error().message.find("maximum age of 500 ms"), std::string::npos)
      << late.error().message;
  EXPECT_EQ(shared.destroyed.load(), 1);
}

TEST(SessionRegistry, RunningCallIsNotExpired) {
  Shared shared;
  FakeBackend backend(shared);
  SessionRegistry registry(options([](SessionRegistryOptions& o) {
    o.idle_timeout = 100ms;
    o.max_age = 100ms;
  }));
  auto id = registry.open(backend, {}, "alice");
  ASSERT_TRUE(id);
  auto call = std::async(std::launch::async,
                         [&] { return registry.run(*id, "alice", code("block"), {}, nullptr); });
  ASSERT_TRUE(shared.wait_entered(1));
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(shared.destroyed.load(), 0);
  // Still live, past both bounds (a session that ended while busy is no longer listed).
  EXPECT_EQ(registry.list("alice").size(), 1U);
  shared.release();
  auto result = call.get();
  ASSERT_TRUE(result);
  EXPECT_EQ(result->value, "block");
  // Its age is over: it ends once the call returned.
  EXPECT_TRUE(eventually([&] { return shared.destroyed.load() == 1; }));
}

TEST(SessionRegistry, CloseOwnerClosesAllOfItsSessions) {
  Shared shared;
  FakeBackend backend(shared);
  SessionRegistry registry;
  auto a1 = registry.open(backend, {}, "alice");
  auto a2 = registry.open(backend, {}, "alice");
  auto b1 = registry.open(backend, {}, "bob");
  ASSERT_TRUE(a1 && a2 && b1);
  registry.close_owner("alice");
  EXPECT_EQ(shared.destroyed.load(), 2);
  EXPECT_TRUE(registry.list("alice").empty());
  EXPECT_EQ(registry.list("bob").size(), 1U);
  auto gone = registry.run(*a1, "alice", code("x"), {}, nullptr);
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().message.find("ended with the client session"), std::string::npos);
  EXPECT_TRUE(registry.run(*b1, "bob", code("x"), {}, nullptr));
}

TEST(SessionRegistry, DestructionClosesEverything) {
  Shared shared;
  FakeBackend backend(shared);
  {
    SessionRegistry registry;
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(registry.open(backend, {}, "alice"));
  }
  EXPECT_EQ(shared.opened.load(), 5);
  EXPECT_EQ(shared.destroyed.load(), 5);
}

TEST(SessionRegistry, ListAndFilesAreBounded) {
  Shared shared;
  FakeBackend backend(shared);
  SessionRegistry registry(options([](SessionRegistryOptions& o) {
    o.max_read_bytes = 50;
    o.max_write_bytes = 4;
  }));
  auto id = registry.open(backend, {}, "alice");
  ASSERT_TRUE(id);
  ASSERT_TRUE(registry.run(*id, "alice", code("x"), {}, nullptr));
  auto listed = registry.list("alice");
  ASSERT_EQ(listed.size(), 1U);
  EXPECT_EQ(listed[0].id, *id);
  EXPECT_EQ(listed[0].backend, "fake");
  EXPECT_EQ(listed[0].environment, "host");
  EXPECT_EQ(listed[0].calls, 1);
  ASSERT_TRUE(listed[0].stats);
  EXPECT_TRUE(listed[0].stats->interpreter_alive);
  auto read = registry.read_file(*id, "alice", "a.txt", 1000);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("100 bytes"), std::string::npos) << read.error().message;
  EXPECT_FALSE(registry.read_file(*id, "alice", "/etc/passwd", 1000));
  EXPECT_FALSE(registry.read_file(*id, "alice", "d/../../x", 1000));
  EXPECT_FALSE(registry.write_file(*id, "alice", "..", "ab"));
  EXPECT_FALSE(registry.write_file(*id, "alice", "b.txt", "12345"));
  EXPECT_TRUE(registry.write_file(*id, "alice", "b.txt", "1234"));
  EXPECT_TRUE(registry.write_file(*id, "alice", "x..y/..z", "1"));
  auto files = registry.list_files(*id, "alice", "");
  ASSERT_TRUE(files);
  EXPECT_EQ(files->size(), 1U);
  EXPECT_TRUE(registry.reset(*id, "alice"));
}

}  // namespace
}  // namespace cordon::frontend
