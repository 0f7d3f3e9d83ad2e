#include "child_plan_wire.h"

#include <cstring>

namespace cordon::ns {
namespace {

constexpr std::uint32_t kNone = 0xffffffffU;

struct WireHeader {
  std::uint32_t magic = kChildPlanMagic;
  std::uint32_t version = kChildPlanVersion;
  std::uint64_t clone_flags = 0;
  std::uint32_t size = 0;  // of the whole encoding
  std::uint32_t mount_count = 0;
  std::uint32_t join_fd_count = 0;
  std::uint32_t hostname = kNone;  // offset of a string
  std::uint32_t hostname_len = 0;
  std::uint32_t filter = kNone;  // offset of the instructions, or kNone
  std::uint32_t filter_count = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::int32_t cap_last = 0;
  std::uint8_t loopback_up = 0;
  std::uint8_t clear_groups = 0;
  std::uint8_t drop_capabilities = 0;
  std::uint8_t send_tmp_fd = 0;
  std::uint32_t reserved = 0;
};

struct WireMount {
  std::uint32_t op = 0;
  std::uint32_t mode = 0;
  std::uint64_t flags = 0;
  std::uint32_t target = kNone;  // offsets of strings, or kNone
  std::uint32_t source = kNone;
  std::uint32_t data = kNone;  // offset of data_len bytes and a NUL, or kNone
  std::uint32_t data_len = 0;
  std::uint8_t read_only = 0;
  std::uint8_t optional = 0;
  std::uint8_t reserved[6] = {};
};

// Records keep the heap behind them 8-byte aligned (the instructions come first there).
static_assert(sizeof(WireHeader) % 8 == 0 && sizeof(WireMount) % 8 == 0);
static_assert(sizeof(sock_filter) == 8);

constexpr auto kLastOp = static_cast<std::uint32_t>(policy::FsOp::kDetachOldRoot);

// Appends `len` bytes and a NUL; returns their offset (kNone for a null pointer).
std::uint32_t put(std::string& heap, std::size_t base, const char* p, std::size_t len) {
  if (p == nullptr) return kNone;
  const auto at = static_cast<std::uint32_t>(base + heap.size());
  heap.append(p, len);
  heap.push_back('\0');
  return at;
}

std::uint32_t put(std::string& heap, std::size_t base, const char* s) {
  return s == nullptr ? kNone : put(heap, base, s, std::strlen(s));
}

// A string at `off` that ends with a NUL inside `bytes`, or nullptr.
const char* string_at(std::string_view bytes, std::uint32_t off) {
  if (off >= bytes.size()) return nullptr;
  if (std::memchr(bytes.data() + off, '\0', bytes.size() - off) == nullptr) return nullptr;
  return bytes.data() + off;
}

// `len` bytes at `off` followed by a NUL, inside `bytes`, or nullptr.
const char* data_at(std::string_view bytes, std::uint32_t off, std::uint64_t len) {
  if (off >= bytes.size() || len >= bytes.size() - off) return nullptr;
  if (bytes[off + len] != '\0') return nullptr;
  return bytes.data() + off;
}

// init_argv and init_envp: the same for every set-up process.
char kInitName[] = "cordon-init";
char kInitRole[] = "ns";
char* const kInitArgv[] = {kInitName, kInitRole, nullptr};
char* const kInitEnvp[] = {nullptr};

}  // namespace

std::string encode_child_plan(const ChildPlan& plan, std::uint64_t clone_flags) {
  WireHeader h;
  h.clone_flags = clone_flags;
  h.mount_count = static_cast<std::uint32_t>(plan.mount_count);
  h.join_fd_count = static_cast<std::uint32_t>(plan.join_fd_count);
  h.uid = plan.uid;
  h.gid = plan.gid;
  h.cap_last = plan.cap_last;
  h.loopback_up = plan.loopback_up ? 1 : 0;
  h.clear_groups = plan.clear_groups ? 1 : 0;
  h.drop_capabilities = plan.drop_capabilities ? 1 : 0;
  h.send_tmp_fd = plan.send_tmp_fd ? 1 : 0;

  const std::size_t base = sizeof(WireHeader) + plan.mount_count * sizeof(WireMount);
  std::string heap;
  // The instructions first, at an 8-byte aligned offset (base is a multiple of 8).
  if (plan.seccomp_filter != nullptr) {
    h.filter = static_cast<std::uint32_t>(base);
    h.filter_count = static_cast<std::uint32_t>(plan.seccomp_count);
    heap.append(reinterpret_cast<const char*>(plan.seccomp_filter),
                plan.seccomp_count * sizeof(sock_filter));
  }
  h.hostname = put(heap, base, plan.hostname, plan.hostname_len);
  h.hostname_len = static_cast<std::uint32_t>(plan.hostname_len);
  std::vector<WireMount> mounts(plan.mount_count);
  for (std::size_t i = 0; i < plan.mount_count; ++i) {
    const ChildMount& m = plan.mounts[i];
    WireMount& w = mounts[i];
    w.op = static_cast<std::uint32_t>(m.op);
    w.mode = m.mode;
    w.flags = m.flags;
    w.target = put(heap, base, m.target);
    w.source = put(heap, base, m.source);
    w.data = put(heap, base, m.data, m.data_len);
    w.data_len = static_cast<std::uint32_t>(m.data_len);
    w.read_only = m.read_only ? 1 : 0;
    w.optional = m.optional ? 1 : 0;
  }
  h.size = static_cast<std::uint32_t>(base + heap.size());
  std::string out;
  out.reserve(h.size);
  out.append(reinterpret_cast<const char*>(&h), sizeof(h));
  out.append(reinterpret_cast<const char*>(mounts.data()), mounts.size() * sizeof(WireMount));
  out.append(heap);
  return out;
}

const char* decode_child_plan(std::string_view bytes, DecodedChildPlan& out) {
  WireHeader h;
  if (bytes.size() < sizeof(h)) return "shorter than its header";
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(std::uint64_t) != 0) {
    return "not 8-byte aligned";
  }
  std::memcpy(&h, bytes.data(), sizeof(h));
  if (h.magic != kChildPlanMagic) return "not a set-up plan";
  if (h.version != kChildPlanVersion) return "a set-up plan of another version";
  if (h.size != bytes.size()) return "size does not match";
  if (h.mount_count > kMaxWireMounts) return "too many mount steps";
  if (h.join_fd_count > ChildPlan::kMaxJoinFds) return "too many limit groups";
  if (h.hostname_len > kMaxWireHostname) return "hostname too long";
  if (h.cap_last < 0 || h.cap_last > 63) return "last capability out of range";
  const std::size_t records = sizeof(h) + std::size_t{h.mount_count} * sizeof(WireMount);
  if (records > bytes.size()) return "mount steps beyond the end";

  DecodedChildPlan d;
  d.clone_flags = h.clone_flags;
  ChildPlan& p = d.plan;
  p.join_fd_count = h.join_fd_count;
  p.uid = h.uid;
  p.gid = h.gid;
  p.cap_last = h.cap_last;
  p.loopback_up = h.loopback_up != 0;
  p.clear_groups = h.clear_groups != 0;
  p.drop_capabilities = h.drop_capabilities != 0;
  p.send_tmp_fd = h.send_tmp_fd != 0;
  p.hostname = data_at(bytes, h.hostname, h.hostname_len);
  if (p.hostname == nullptr) return "hostname outside the plan";
  p.hostname_len = h.hostname_len;
  if (h.filter != kNone) {
    if (h.filter_count == 0 || h.filter_count > kMaxWireFilter) return "filter size out of range";
    if (h.filter % alignof(sock_filter) != 0) return "filter not aligned";
    if (h.filter < records || h.filter > bytes.size() ||
        std::size_t{h.filter_count} * sizeof(sock_filter) > bytes.size() - h.filter) {
      return "filter outside the plan";
    }
    p.seccomp_filter = reinterpret_cast<const sock_filter*>(bytes.data() + h.filter);
    p.seccomp_count = h.filter_count;
  }
  d.mounts.resize(h.mount_count);
  for (std::uint32_t i = 0; i < h.mount_count; ++i) {
    WireMount w;
    std::memcpy(&w, bytes.data() + sizeof(h) + std::size_t{i} * sizeof(WireMount), sizeof(w));
    if (w.op > kLastOp) return "unknown mount step";
    ChildMount& m = d.mounts[i];
    m.op = static_cast<policy::FsOp>(w.op);
    m.mode = w.mode;
    m.flags = w.flags;
    m.read_only = w.read_only != 0;
    m.optional = w.optional != 0;
    m.target = string_at(bytes, w.target);
    if (m.target == nullptr) return "mount target outside the plan";
    if (w.source != kNone) {
      m.source = string_at(bytes, w.source);
      if (m.source == nullptr) return "mount source outside the plan";
    }
    if (w.data != kNone) {
      m.data = data_at(bytes, w.data, w.data_len);
      if (m.data == nullptr) return "mount data outside the plan";
      m.data_len = w.data_len;
    }
  }
  p.mounts = d.mounts.data();
  p.mount_count = d.mounts.size();
  p.init_argv = kInitArgv;
  p.init_envp = kInitEnvp;
  out = std::move(d);
  // The move kept the vector's buffer: re-point at it all the same.
  out.plan.mounts = out.mounts.data();
  return nullptr;
}

}  // namespace cordon::ns
