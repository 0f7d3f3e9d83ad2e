// The one protocol of cordon's process-tree helpers: cordon-ns-init (PID 1 of a namespace
// sandbox), cordon-oci-init (PID 1 of a container) and cordon-reaper (the subprocess
// backend's fallback subreaper). Each starts the code from an order, reaps, ends every
// other process of the run once the code's main process has ended, and only then reports
// (init_end.h holds that ending, once). What differs is the channel each is given, which
// its own header states: the namespace init gets its order as a memfd with the code's
// stdio over a SOCK_SEQPACKET socket (its sandbox is built before the run is known); the
// container's init reads the same records inline from the stream socket the OCI runtime
// passes it (the runtime gives the stdio); the reaper is started per run, so its order is
// its command line, environment and cwd, and it starts the code at once. The events and
// the report are the same for all three.
//
// Header-only and free of libcordon-core: the helpers are small static binaries. Every
// side is built from this tree at the same time, so the structs go as they are; the
// magics catch a helper of another build.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cordon::init {

// ---- cordon -> helper: the order ----

inline constexpr std::int32_t kOrderMagic = 0x6f726472;  // "ordr"

enum class OrderKind : std::uint32_t {
  kRun = 0,        // start the code (exe, args, env, cwd, rlimits, files, backstop)
  kPrestart,       // start the interpreter now, waiting for its code (no files)
  kRunPrestarted,  // files and one kCode record, for the interpreter kPrestart started
  // A session's run (the namespace init, ns_init_channel.h; the container's,
  // oci_init_channel.h): as kRun, but the init keeps
  // its control socket, ends the run on a kEndRun, and after the report waits for the next
  // kSessionRun instead of being killed. The first order's kind puts an init in this mode.
  kSessionRun,
  kEndRun,  // header alone (size 0, no fds): end the session's current run now
};

struct OrderHeader {
  std::int32_t magic = kOrderMagic;
  std::uint32_t size = 0;  // bytes of records that follow (in the memfd, or inline)
  OrderKind kind = OrderKind::kRun;
};

// One record of the order: a header, then `len` bytes of data, padded to 8 bytes. Strings
// carry their NUL.
enum class OrderTag : std::uint32_t {
  kExe = 1,   // data: path
  kArg,       // data: one argv element (in order)
  kEnv,       // data: one "NAME=value"
  kCwd,       // data: path
  kDir,       // aux: mode; data: path (created before the files that follow)
  kFile,      // aux: mode; data: path NUL contents
  kRlimit,    // aux: resource; data: two uint64 (soft, hard)
  kCode,      // data: the code a prestarted interpreter runs (bytes, no NUL added)
  kBackstop,  // data: one int64, milliseconds: the helper ends the run this long after
              // the code started even if cordon is gone (cordon's deadline comes first)
  kRelay,     // aux: a TCP port; data: a unix socket's path. Before the code starts, the
              // helper listens on 127.0.0.1:port and relays each connection to the socket
              // (the egress proxy's, issue #16; libexec/init/relay.h). At most one.
};

struct OrderRecord {
  OrderTag tag = OrderTag::kExe;
  std::uint32_t aux = 0;
  std::uint32_t len = 0;
};

// The next record of `buf` at `*offset` (moved past it); null at the end or where a record
// does not fit.
inline const OrderRecord* next_record(const char* buf, std::uint32_t size, std::uint32_t* offset) {
  if (*offset > size || size - *offset < sizeof(OrderRecord)) return nullptr;
  const auto* r = reinterpret_cast<const OrderRecord*>(buf + *offset);
  if (r->len > size - *offset - sizeof(OrderRecord)) return nullptr;
  const std::uint64_t next =
      (std::uint64_t{*offset} + sizeof(OrderRecord) + r->len + 7U) & ~std::uint64_t{7};
  *offset = next > size ? size + 1 : static_cast<std::uint32_t>(next);
  return r;
}

inline const char* record_data(const OrderRecord* r) {
  return reinterpret_cast<const char*>(r + 1);
}

// 0 when `buf` is a well-formed order of `kind` (records that fill it exactly, strings
// terminated, files with a path, fixed-size data of the right size, what the kind needs
// present), else EPROTO. A helper checks the whole order before it acts on any record.
inline int check_order(const char* buf, std::uint32_t size, OrderKind kind) {
  // kEndRun is a header alone; any other value is no kind at all.
  if (kind != OrderKind::kRun && kind != OrderKind::kPrestart &&
      kind != OrderKind::kRunPrestarted && kind != OrderKind::kSessionRun) {
    return EPROTO;
  }
  if (size % 8 != 0) return EPROTO;
  std::uint32_t offset = 0;
  std::size_t exes = 0;
  std::size_t args = 0;
  std::size_t codes = 0;
  std::size_t relays = 0;
  while (offset < size) {
    const OrderRecord* r = next_record(buf, size, &offset);
    if (r == nullptr || offset > size) return EPROTO;
    const char* data = record_data(r);
    const bool terminated = r->len > 0 && data[r->len - 1] == '\0';
    switch (r->tag) {
      case OrderTag::kExe:
        ++exes;
        [[fallthrough]];
      case OrderTag::kArg:
        args += r->tag == OrderTag::kArg ? 1 : 0;
        [[fallthrough]];
      case OrderTag::kEnv:
      case OrderTag::kCwd:
      case OrderTag::kDir:
        if (!terminated) return EPROTO;
        break;
      case OrderTag::kFile: {
        std::size_t path_len = 0;
        while (path_len < r->len && data[path_len] != '\0') ++path_len;
        if (path_len == 0 || path_len == r->len) return EPROTO;
        break;
      }
      case OrderTag::kRlimit:
        if (r->len != 2 * sizeof(std::uint64_t)) return EPROTO;
        break;
      case OrderTag::kCode:
        ++codes;
        break;
      case OrderTag::kBackstop:
        if (r->len != sizeof(std::int64_t)) return EPROTO;
        break;
      case OrderTag::kRelay:
        if (++relays > 1 || r->aux == 0 || r->aux > 65535 || r->len < 2 || !terminated) {
          return EPROTO;
        }
        break;
      default:
        return EPROTO;
    }
  }
  // A kRunPrestarted order carries no command (the interpreter runs already), only code.
  if (kind == OrderKind::kRunPrestarted) return codes == 1 && exes == 0 ? 0 : EPROTO;
  return exes == 1 && args > 0 && codes == 0 ? 0 : EPROTO;
}

// Appends one record to `out`, 8-byte aligned as next_record() expects: `a`, then a NUL
// when `nul_between`, then `b`.
inline void add_record(std::string& out, OrderTag tag, std::uint32_t aux, std::string_view a,
                       std::string_view b = {}, bool nul_between = false) {
  OrderRecord r;
  r.tag = tag;
  r.aux = aux;
  r.len = static_cast<std::uint32_t>(a.size() + b.size() + (nul_between ? 1 : 0));
  out.append(reinterpret_cast<const char*>(&r), sizeof(r));
  out.append(a);
  if (nul_between) out.push_back('\0');
  out.append(b);
  out.resize((out.size() + 7) & ~std::size_t{7}, '\0');
}

// A string record, its NUL included.
inline void add_string(std::string& out, OrderTag tag, const std::string& s,
                       std::uint32_t aux = 0) {
  add_record(out, tag, aux, std::string_view(s.c_str(), s.size() + 1));
}

// ---- helper -> cordon ----

// Events on a SOCK_SEQPACKET channel (the namespace init's, the reaper's): kReady (waiting
// for an order), kStarted (the code's main process is `pid`), kFailed (the code could not
// be started: the helper's stage, the errno and, for a file, its index), kTmpFd (the
// namespace sandbox's /tmp as an SCM_RIGHTS fd, for artifacts).
enum class EventKind : std::int32_t { kReady = 1, kFailed, kTmpFd, kStarted };
struct Event {
  EventKind kind = EventKind::kReady;
  std::int32_t stage = 0;
  std::int32_t error = 0;
  std::int32_t step = -1;
  std::int32_t pid = 0;
};

inline constexpr std::int32_t kReportMagic = 0x636f7264;  // "cord"

// The end of a run, sent once the code's main process has ended (or cordon asked to stop)
// and every other process of the run has been killed and reaped (init_end.h): nothing of
// the code runs while cordon reads the figures and the artifacts. cordon refuses a report
// without everything_reaped.
struct Report {
  std::int32_t magic = 0;        // kReportMagic once filled in
  std::int32_t status = 0;       // the main process's wait status, when main_reaped
  std::int32_t main_reaped = 0;  // 1: `status` and the main_* figures are real
  std::int32_t everything_reaped = 0;
  std::int32_t start_errno = 0;  // the code could not be started at all (its exec failed)
  std::int32_t relay_errno = 0;  // the order's relay could not listen: the code never started
  std::int64_t main_utime_us = 0;
  std::int64_t main_stime_us = 0;
  std::int64_t main_maxrss_kb = 0;
  std::int64_t tree_cpu_us = 0;     // user + system of everything the helper reaped
  std::int64_t tree_maxrss_kb = 0;  // the largest single reaped process's peak RSS
};

// A report as cordon takes it: the magic of this build and the promise that nothing is
// left running.
[[nodiscard]] inline bool is_complete(const Report& r) {
  return r.magic == kReportMagic && r.everything_reaped == 1;
}

}  // namespace cordon::init
