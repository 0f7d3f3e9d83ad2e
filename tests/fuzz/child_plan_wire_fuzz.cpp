// The set-up plan that cordon sends cordon-ns-spawner (backends/namespace/child_plan_wire.h):
// decode_child_plan over any bytes. Properties: it never reads outside the input (ASan) and
// never crashes; what it accepts has every pointer inside the input, every string
// terminated, every count within bounds; and what it accepts encodes and decodes again to
// the same plan.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "child_plan_wire.h"
#include "fuzz_util.h"

namespace {

using cordon::fuzz::require;
using namespace cordon::ns;

bool inside(std::string_view bytes, const void* p, std::size_t len) {
  const auto* c = static_cast<const char*>(p);
  return c >= bytes.data() && len <= bytes.size() && c <= bytes.data() + (bytes.size() - len);
}

void check_inside(std::string_view bytes, const DecodedChildPlan& d) {
  const ChildPlan& p = d.plan;
  require(p.mount_count == d.mounts.size() && p.mount_count <= kMaxWireMounts);
  require(p.join_fd_count <= ChildPlan::kMaxJoinFds);
  require(inside(bytes, p.hostname, p.hostname_len + 1) && p.hostname[p.hostname_len] == '\0');
  if (p.seccomp_filter != nullptr) {
    require(p.seccomp_count > 0 && p.seccomp_count <= kMaxWireFilter);
    require(inside(bytes, p.seccomp_filter, p.seccomp_count * sizeof(sock_filter)));
  }
  for (const ChildMount& m : d.mounts) {
    require(inside(bytes, m.target, std::strlen(m.target) + 1));
    if (m.source != nullptr) require(inside(bytes, m.source, std::strlen(m.source) + 1));
    if (m.data != nullptr)
      require(inside(bytes, m.data, m.data_len + 1) && m.data[m.data_len] == '\0');
  }
}

bool same_string(const char* a, const char* b) {
  return (a == nullptr) == (b == nullptr) && (a == nullptr || std::strcmp(a, b) == 0);
}

void check_same(const DecodedChildPlan& a, const DecodedChildPlan& b) {
  require(a.clone_flags == b.clone_flags && a.mounts.size() == b.mounts.size());
  require(a.plan.uid == b.plan.uid && a.plan.gid == b.plan.gid &&
          a.plan.cap_last == b.plan.cap_last && a.plan.loopback_up == b.plan.loopback_up &&
          a.plan.clear_groups == b.plan.clear_groups &&
          a.plan.drop_capabilities == b.plan.drop_capabilities &&
          a.plan.send_tmp_fd == b.plan.send_tmp_fd && a.plan.join_fd_count == b.plan.join_fd_count);
  require(a.plan.hostname_len == b.plan.hostname_len &&
          std::memcmp(a.plan.hostname, b.plan.hostname, a.plan.hostname_len) == 0);
  require(
      a.plan.seccomp_count == b.plan.seccomp_count &&
      (a.plan.seccomp_count == 0 || std::memcmp(a.plan.seccomp_filter, b.plan.seccomp_filter,
                                                a.plan.seccomp_count * sizeof(sock_filter)) == 0));
  for (std::size_t i = 0; i < a.mounts.size(); ++i) {
    const ChildMount& x = a.mounts[i];
    const ChildMount& y = b.mounts[i];
    require(x.op == y.op && x.mode == y.mode && x.flags == y.flags && x.read_only == y.read_only &&
            x.optional == y.optional);
    require(same_string(x.target, y.target) && same_string(x.source, y.source));
    require((x.data == nullptr) == (y.data == nullptr) && x.data_len == y.data_len &&
            (x.data == nullptr || std::memcmp(x.data, y.data, x.data_len) == 0));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The spawner decodes from a page-aligned mapping: give the decoder an aligned copy.
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  DecodedChildPlan d;
  if (decode_child_plan(bytes, d) != nullptr) return 0;
  check_inside(bytes, d);
  const std::string again = encode_child_plan(d.plan, d.clone_flags);
  DecodedChildPlan e;
  require(decode_child_plan(again, e) == nullptr);
  check_same(d, e);
  return 0;
}
