// A host's top level as the backends' plans see it, without reading this host: Debian 12's
// merged /usr (/bin, /lib and /lib64 are symlinks into it). The namespace and container
// plan tests build their plans over it.
#pragma once

#include "cordon/policy/fs_plan.h"

namespace cordon::testing {

inline policy::HostLayout debian_layout() {
  policy::HostLayout l;
  l.top_level = {{"/bin", policy::HostEntry::Kind::kSymlink, "usr/bin"},
                 {"/lib", policy::HostEntry::Kind::kSymlink, "usr/lib"},
                 {"/lib64", policy::HostEntry::Kind::kSymlink, "usr/lib64"}};
  return l;
}

}  // namespace cordon::testing
