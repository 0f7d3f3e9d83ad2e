// A memfd holding some bytes: how cordon hands the sandbox's init its order
// (sandbox_process.cpp) and cordon-ns-spawner its set-up plan (setup_spawner.cpp). No size
// limit of a socket message; the other side reads or maps it whole.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "cordon/error.h"
#include "cordon/unique_fd.h"

namespace cordon::ns {

// `what` names the content in an error ("the sandbox's order"). `sealed`: no one holding the
// memfd can change it afterwards (for bytes many sandboxes are given).
[[nodiscard]] inline Result<UniqueFd> memfd_holding(const char* name, std::string_view bytes,
                                                    const std::string& what, bool sealed = false) {
  UniqueFd memfd(::memfd_create(name, MFD_CLOEXEC | (sealed ? MFD_ALLOW_SEALING : 0U)));
  if (!memfd) return fail_errno("memfd_create for " + what);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(memfd.get(), bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return fail_errno("write " + what);
    done += static_cast<std::size_t>(w);
  }
  if (sealed && ::fcntl(memfd.get(), F_ADD_SEALS,
                        F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) != 0) {
    return fail_errno("seal " + what);
  }
  return memfd;
}

}  // namespace cordon::ns
