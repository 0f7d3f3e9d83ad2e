// The order every process-tree helper reads (cordon/proc/init_protocol.h): check_order is
// what cordon-ns-init and cordon-oci-init run over the records before they act on any.
// Input: one byte picks the order's kind, the rest is the records. Properties: the check
// never reads outside the buffer (the sanitizer presets catch it) and an accepted order
// is what the helpers assume: walking it with next_record ends exactly at its size, every
// string record is terminated, every file has a path, the fixed-size records have their
// size, a relay has a port and a path (one at most), and the kind's required records are
// there. A valid order written with
// add_record/add_string is accepted.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "cordon/proc/init_protocol.h"
#include "fuzz_util.h"

namespace {

using cordon::fuzz::require;
using namespace cordon::init;

void check_accepted(const std::string& records, OrderKind kind) {
  const auto size = static_cast<std::uint32_t>(records.size());
  std::uint32_t offset = 0;
  std::size_t exes = 0;
  std::size_t codes = 0;
  std::size_t relays = 0;
  std::uint32_t last = 0;
  while (const OrderRecord* r = next_record(records.data(), size, &offset)) {
    require(offset <= size && offset > last);
    last = offset;
    const char* data = record_data(r);
    require(data + r->len <= records.data() + size);
    switch (r->tag) {
      case OrderTag::kExe:
        ++exes;
        [[fallthrough]];
      case OrderTag::kArg:
      case OrderTag::kEnv:
      case OrderTag::kCwd:
      case OrderTag::kDir:
        require(r->len > 0 && data[r->len - 1] == '\0');
        break;
      case OrderTag::kFile:
        require(std::memchr(data, '\0', r->len) != nullptr && data[0] != '\0');
        break;
      case OrderTag::kRlimit:
        require(r->len == 16);
        break;
      case OrderTag::kBackstop:
        require(r->len == 8);
        break;
      case OrderTag::kCode:
        ++codes;
        break;
      case OrderTag::kRelay:  // a port, a path: what the helpers listen on and relay to
        ++relays;
        require(r->aux >= 1 && r->aux <= 65535 && r->len >= 2 && data[r->len - 1] == '\0');
        break;
      default:
        require(false);
    }
  }
  require(offset == size);
  require(relays <= 1);
  require(kind == OrderKind::kRunPrestarted ? codes == 1 && exes == 0 : exes == 1 && codes == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cordon::init;
  if (size == 0) return 0;
  // 4: kEndRun (a header alone, never records), 5: not a kind.
  const auto kind = static_cast<OrderKind>(data[0] % 6);
  // A copy in memory aligned as the helpers' (a mapped memfd, a vector's buffer).
  const std::string records(reinterpret_cast<const char*>(data + 1), size - 1);
  if (check_order(records.data(), static_cast<std::uint32_t>(records.size()), kind) == 0) {
    require(kind != OrderKind::kEndRun && kind != static_cast<OrderKind>(5));
    check_accepted(records, kind);
  }
  // What the writers make is always accepted.
  std::string made;
  add_string(made, OrderTag::kExe, "/usr/bin/python3");
  add_string(made, OrderTag::kArg,
             std::string(reinterpret_cast<const char*>(data), size > 64 ? 64 : size).c_str());
  add_record(made, OrderTag::kFile, 0644, "in.txt",
             std::string_view(reinterpret_cast<const char*>(data), size), true);
  require(check_order(made.data(), static_cast<std::uint32_t>(made.size()), OrderKind::kRun) == 0);
  return 0;
}
