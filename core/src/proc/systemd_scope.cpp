// start_delegated_scope: one StartTransientUnit call over sd-bus and a wait for the move.
#include "cordon/proc/systemd_scope.h"

#include <systemd/sd-bus.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "cordon/proc/cgroup_fs.h"
#include "cordon/proc/cgroup_layout.h"
#include "cordon/scope_exit.h"

namespace cordon::proc {
namespace {

std::string bus_error_text(const sd_bus_error& error, int r) {
  if (error.message != nullptr) return error.message;
  if (error.name != nullptr) return error.name;
  return std::strerror(-r);
}

// Whether /proc/<pid>/cgroup's v2 line ends with "/<unit>".
bool in_unit(pid_t pid, const std::string& unit) {
  auto text = cgroupfs::read("/proc/" + std::to_string(pid) + "/cgroup");
  if (!text) return false;
  for (const auto& entry : parse_proc_cgroup(*text)) {
    if (entry.id == 0 && entry.controllers.empty() && entry.path.ends_with("/" + unit)) return true;
  }
  return false;
}

}  // namespace

SystemdBus default_systemd_bus() {
  return ::geteuid() == 0 ? SystemdBus::kSystem : SystemdBus::kUser;
}

bool systemd_bus_present(SystemdBus bus) {
  std::error_code ec;
  if (bus == SystemdBus::kSystem) {
    // sd-bus's default address of the system bus, unless the environment names another.
    if (const char* a = std::getenv("DBUS_SYSTEM_BUS_ADDRESS"); a != nullptr && a[0] != '\0')
      return true;
    return std::filesystem::exists("/run/dbus/system_bus_socket", ec);
  }
  if (const char* a = std::getenv("DBUS_SESSION_BUS_ADDRESS"); a != nullptr && a[0] != '\0')
    return true;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  return runtime != nullptr && std::filesystem::exists(std::filesystem::path(runtime) / "bus", ec);
}

Status start_delegated_scope(SystemdBus bus_kind, const std::string& unit, pid_t pid,
                             std::chrono::milliseconds timeout) {
  sd_bus* bus = nullptr;
  int r = bus_kind == SystemdBus::kSystem ? sd_bus_open_system(&bus) : sd_bus_open_user(&bus);
  if (r < 0) {
    return fail(ErrorCode::kUnavailable, std::string("connect to the ") +
                                             (bus_kind == SystemdBus::kSystem ? "system" : "user") +
                                             " bus: " + std::strerror(-r));
  }
  ScopeExit close_bus([bus] { sd_bus_flush_close_unref(bus); });

  sd_bus_message* m = nullptr;
  r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1",
                                     "/org/freedesktop/systemd1",
                                     "org.freedesktop.systemd1.Manager", "StartTransientUnit");
  ScopeExit unref_m([&m] { sd_bus_message_unref(m); });
  // The unit's properties: a(sv). PIDs are the processes the scope adopts (a scope cannot
  // start empty); Delegate hands us its subtree; CollectMode lets systemd forget the unit
  // even when its last process failed, so names do not pile up as failed units.
  if (r >= 0) r = sd_bus_message_append(m, "ss", unit.c_str(), "fail");
  if (r >= 0) r = sd_bus_message_open_container(m, 'a', "(sv)");
  if (r >= 0)
    r = sd_bus_message_append(m, "(sv)", "Description", "s",
                              "cordon sandbox runtime (delegated cgroups)");
  if (r >= 0)
    r = sd_bus_message_append(m, "(sv)", "PIDs", "au", 1, static_cast<std::uint32_t>(pid));
  if (r >= 0) r = sd_bus_message_append(m, "(sv)", "Delegate", "b", 1);
  if (r >= 0) r = sd_bus_message_append(m, "(sv)", "CollectMode", "s", "inactive-or-failed");
  if (r >= 0) r = sd_bus_message_close_container(m);
  if (r >= 0) r = sd_bus_message_append(m, "a(sa(sv))", 0);  // no auxiliary units
  if (r < 0)
    return fail(ErrorCode::kSystem, "build StartTransientUnit: " + std::string(std::strerror(-r)));

  // SD_BUS_ERROR_NULL is a C compound literal; all-zero is the same empty error.
  sd_bus_error error{};
  ScopeExit free_error([&error] { sd_bus_error_free(&error); });
  sd_bus_message* reply = nullptr;
  const auto usec = static_cast<std::uint64_t>(timeout.count()) * 1000;
  r = sd_bus_call(bus, m, usec, &error, &reply);
  sd_bus_message_unref(reply);
  if (r < 0) {
    return fail(ErrorCode::kUnavailable, "systemd refused the transient scope " + unit +
                                             " (Delegate=yes): " + bus_error_text(error, r));
  }
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!in_unit(pid, unit)) {
    if (std::chrono::steady_clock::now() >= until) {
      return fail(ErrorCode::kUnavailable,
                  "systemd started " + unit + " but did not move process " + std::to_string(pid) +
                      " into it within " + std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return {};
}

}  // namespace cordon::proc
