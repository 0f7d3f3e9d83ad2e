// cordon <-> cordon-ns-spawner (setup_spawner.h): one SOCK_SEQPACKET socket, the
// spawner's fd 3. Per sandbox, one request and one reply, in turn.
//   request: SpawnRequest, with fds [plan memfd, go, channel, report, init, join...]
//            (the plan: child_plan_wire.h, in a memfd: no size limit of a socket message)
//   reply:   SpawnReply, with the set-up process's pidfd when pid > 0
// EOF on the socket ends the spawner. Header-only: both ends are builds of this tree.
#pragma once

#include <cstdint>

namespace cordon::ns {

inline constexpr int kSpawnerSocketFd = 3;
inline constexpr std::uint32_t kSpawnRequestMagic = 0x51525343;  // "CSRQ"
// The fds every request carries before the join fds: plan, go, channel, report, init.
inline constexpr int kSpawnFixedFds = 5;

struct SpawnRequest {
  std::uint32_t magic = kSpawnRequestMagic;
  std::uint32_t plan_size = 0;  // bytes of the plan in the memfd
};

struct SpawnReply {
  std::int64_t pid = -1;   // the set-up process (our caller's child: CLONE_PARENT), or -1
  std::int32_t error = 0;  // errno of a failed clone (or EPROTO: a request it cannot read)
  std::int32_t reserved = 0;
};

}  // namespace cordon::ns
