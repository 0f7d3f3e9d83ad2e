// start_delegated_scope against a stand-in for systemd on a private D-Bus (a real
// dbus-daemon; the stand-in serves org.freedesktop.systemd1.Manager.StartTransientUnit
// with sd-bus, as systemd does): the call is marshalled as systemd expects it (unit, mode,
// Delegate, PIDs, CollectMode), the caller waits until it was moved into the unit's group,
// and a refusal comes back with the bus's own words. The stand-in moves the process the way
// systemd would, in this host's v2 tree (a hybrid host's controller-less tree will do). The
// real systemd answers in the guest run (tests/guest).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cordon/proc/cgroup2.h"
#include "cordon/proc/cgroup_fs.h"
#include "cordon/proc/spawn.h"
#include "cordon/proc/systemd_scope.h"
#include "kernel_features.h"
#include "proc_test_support.h"

namespace cordon::proc {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// What the stand-in was asked.
struct Call {
  std::string unit, mode, description, collect_mode;
  bool delegate = false;
  std::vector<std::uint32_t> pids;
};

class FakeSystemd {
 public:
  FakeSystemd(std::string address, fs::path slice) : slice_(std::move(slice)) {
    // Each step that fails says so (why_not()): a failure seen once under a loaded full
    // run (2026-12-05) could not be told apart afterwards.
    const auto failed = [this](const char* step, int r) {
      why_not_ = std::string(step) + ": " + std::strerror(-r);
    };
    if (const int r = sd_bus_new(&bus_); r < 0) {
      failed("sd_bus_new", r);
      return;
    }
    sd_bus_set_address(bus_, address.c_str());
    sd_bus_set_bus_client(bus_, 1);
    if (const int r = sd_bus_start(bus_); r < 0) {
      failed("sd_bus_start", r);
      return;
    }
    if (const int r = sd_bus_add_object_vtable(bus_, nullptr, "/org/freedesktop/systemd1",
                                               "org.freedesktop.systemd1.Manager", kVtable, this);
        r < 0) {
      failed("sd_bus_add_object_vtable", r);
      return;
    }
    if (const int r = sd_bus_request_name(bus_, "org.freedesktop.systemd1", 0); r < 0) {
      failed("sd_bus_request_name", r);
      return;
    }
    ready_ = true;
    thread_ = std::thread([this] {
      while (!stop_) {
        if (sd_bus_process(bus_, nullptr) > 0) continue;
        sd_bus_wait(bus_, 50'000);
      }
    });
  }
  ~FakeSystemd() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    sd_bus_flush_close_unref(bus_);
  }
  [[nodiscard]] bool ready() const { return ready_; }
  // Which step failed, when not ready.
  [[nodiscard]] const std::string& why_not() const { return why_not_; }

  std::atomic<bool> refuse{false};
  Call call;  // written by the bus thread before it replies

 private:
  static int on_start(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* self = static_cast<FakeSystemd*>(userdata);
    Call c;
    const char* unit = nullptr;
    const char* mode = nullptr;
    int r = sd_bus_message_read(m, "ss", &unit, &mode);
    if (r < 0) return r;
    c.unit = unit;
    c.mode = mode;
    if ((r = sd_bus_message_enter_container(m, 'a', "(sv)")) < 0) return r;
    while ((r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
      const char* key = nullptr;
      if ((r = sd_bus_message_read(m, "s", &key)) < 0) return r;
      const std::string k = key;
      if (k == "Delegate") {
        int b = 0;
        if ((r = sd_bus_message_read(m, "v", "b", &b)) < 0) return r;
        c.delegate = b != 0;
      } else if (k == "PIDs") {
        if ((r = sd_bus_message_enter_container(m, 'v', "au")) < 0) return r;
        if ((r = sd_bus_message_enter_container(m, 'a', "u")) < 0) return r;
        std::uint32_t pid = 0;
        while ((r = sd_bus_message_read(m, "u", &pid)) > 0) c.pids.push_back(pid);
        if (r < 0) return r;
        sd_bus_message_exit_container(m);
        sd_bus_message_exit_container(m);
      } else if (k == "Description" || k == "CollectMode") {
        const char* v = nullptr;
        if ((r = sd_bus_message_read(m, "v", "s", &v)) < 0) return r;
        (k == "Description" ? c.description : c.collect_mode) = v;
      } else if ((r = sd_bus_message_skip(m, "v")) < 0) {
        return r;
      }
      sd_bus_message_exit_container(m);
    }
    if (r < 0) return r;
    sd_bus_message_exit_container(m);
    self->call = c;
    if (self->refuse) {
      return sd_bus_error_set(error, "org.freedesktop.systemd1.UnitExists",
                              "Unit cordon-test.scope was already loaded or has a fragment file.");
    }
    // What systemd does for a scope: a group named after the unit, the PIDs moved into it.
    const fs::path group = self->slice_ / c.unit;
    ::mkdir(group.c_str(), 0755);
    for (const auto pid : c.pids)
      (void)cgroupfs::write(group / "cgroup.procs", std::to_string(pid));
    return sd_bus_reply_method_return(m, "o", "/org/freedesktop/systemd1/job/1");
  }

  static const sd_bus_vtable kVtable[];

  fs::path slice_;
  sd_bus* bus_ = nullptr;
  bool ready_ = false;
  std::string why_not_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

const sd_bus_vtable FakeSystemd::kVtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("StartTransientUnit", "ssa(sv)a(sa(sv))", "o", FakeSystemd::on_start,
                  SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END};

class SystemdScope : public ::testing::Test {
 protected:
  void SetUp() override {
    auto own = own_cgroup2_dir();
    if (!own) CORDON_SKIP_OR_FAIL("no cgroup v2: " + own.error().describe());
    auto slice = Cgroup2::create(*own);  // the stand-in's "slice"
    if (!slice) CORDON_SKIP_OR_FAIL("cannot create a cgroup v2 here: " + slice.error().describe());
    own_ = *own;
    slice_.emplace(std::move(*slice));
    if (::access("/usr/bin/dbus-daemon", X_OK) != 0) {
      CORDON_SKIP_OR_FAIL("no /usr/bin/dbus-daemon (Debian package dbus-daemon)");
    }
    address_ = "unix:path=" + scratch_.path + "/bus";
    // A private bus with the session policy (anyone may own any name).
    SpawnOptions opts;
    opts.path = "/usr/bin/dbus-daemon";
    opts.argv = {"dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=" + address_};
    auto daemon = spawn(opts);
    ASSERT_TRUE(daemon.has_value()) << daemon.error().describe();
    daemon_.emplace(std::move(*daemon));
    // The socket's file appears at bind(), before listen(): a connection then is refused
    // (a loaded CI run once got "sd_bus_start: Connection refused"), so wait for one.
    const std::string bus = scratch_.path + "/bus";
    const auto listening = [&] {
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::strncpy(addr.sun_path, bus.c_str(), sizeof addr.sun_path - 1);
      const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const bool ok =
          fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
      if (fd >= 0) ::close(fd);
      return ok;
    };
    for (int i = 0; i < 500 && !listening(); ++i) std::this_thread::sleep_for(10ms);
    ASSERT_TRUE(listening()) << "dbus-daemon did not listen";
    ::setenv("DBUS_SYSTEM_BUS_ADDRESS", address_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
    // Back where we were, so the groups can go.
    if (!own_.empty()) (void)cgroupfs::write(own_ / "cgroup.procs", std::to_string(::getpid()));
  }

  testing::ScratchDir scratch_;
  fs::path own_;
  std::optional<Cgroup2> slice_;
  std::optional<ChildProcess> daemon_;
  std::string address_;
};

TEST_F(SystemdScope, AsksForADelegatedScopeAndWaitsUntilMovedIntoIt) {
  FakeSystemd systemd(address_, slice_->path());
  ASSERT_TRUE(systemd.ready()) << systemd.why_not();
  EXPECT_TRUE(systemd_bus_present(SystemdBus::kSystem));
  const std::string unit = "cordon-" + std::to_string(::getpid()) + ".scope";
  auto st = start_delegated_scope(SystemdBus::kSystem, unit, ::getpid(), 5s);
  ASSERT_TRUE(st.has_value()) << st.error().describe();
  EXPECT_EQ(systemd.call.unit, unit);
  EXPECT_EQ(systemd.call.mode, "fail");
  EXPECT_TRUE(systemd.call.delegate);
  EXPECT_EQ(systemd.call.pids, std::vector<std::uint32_t>{static_cast<std::uint32_t>(::getpid())});
  EXPECT_EQ(systemd.call.collect_mode, "inactive-or-failed");
  EXPECT_FALSE(systemd.call.description.empty());
  // Moved: our v2 group is now the unit's.
  auto now = own_cgroup2_dir();
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(*now, slice_->path() / unit);
}

TEST_F(SystemdScope, ARefusalComesBackWithTheBussWords) {
  FakeSystemd systemd(address_, slice_->path());
  ASSERT_TRUE(systemd.ready()) << systemd.why_not();
  systemd.refuse = true;
  auto st = start_delegated_scope(SystemdBus::kSystem, "cordon-test.scope", ::getpid(), 5s);
  ASSERT_FALSE(st.has_value());
  EXPECT_NE(st.error().message.find("already loaded"), std::string::npos) << st.error().describe();
  EXPECT_NE(st.error().message.find("cordon-test.scope"), std::string::npos);
  EXPECT_EQ(own_cgroup2_dir().value_or(""), own_);  // not moved
}

TEST_F(SystemdScope, AManagerThatNeverMovesUsIsAnErrorNotAHang) {
  // A bus with nobody serving systemd1: the call fails at once (no such name).
  auto st = start_delegated_scope(SystemdBus::kSystem, "cordon-test.scope", ::getpid(), 2s);
  ASSERT_FALSE(st.has_value());
  EXPECT_NE(st.error().message.find("systemd refused"), std::string::npos) << st.error().describe();
}

TEST(SystemdScopeBus, NoSocketNoBus) {
  ::setenv("DBUS_SYSTEM_BUS_ADDRESS", "", 1);
  // The default socket decides then; this machine kind runs no system bus in CI.
  EXPECT_EQ(systemd_bus_present(SystemdBus::kSystem), fs::exists("/run/dbus/system_bus_socket"));
  ::unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
}

}  // namespace
}  // namespace cordon::proc
