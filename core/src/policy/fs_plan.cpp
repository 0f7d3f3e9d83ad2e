// make_fs_plan: the sandbox's root filesystem as an ordered list of steps.
#include "cordon/policy/fs_plan.h"

#include <algorithm>
#include <set>

namespace cordon::policy {
namespace {

// runc's defaults (libcontainer/specconv Example(), runtime-spec maskedPaths and
// readonlyPaths), plus kallsyms, key-users and kmsg. Masked files read as empty, masked
// directories as empty read-only tmpfs.
constexpr const char* kProcMasked[] = {
    "/proc/acpi",        "/proc/asound",      "/proc/interrupts",    "/proc/kcore",
    "/proc/keys",        "/proc/key-users",   "/proc/latency_stats", "/proc/timer_list",
    "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",          "/proc/kallsyms",
    "/proc/kmsg",
};
// Kernel knobs: visible, never writable.
constexpr const char* kProcReadonly[] = {
    "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};
constexpr const char* kDevices[] = {"null", "zero", "full", "random", "urandom"};

bool is_under(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir ||
         (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/');
}

bool normalised_absolute(const std::string& path) {
  if (path.empty() || path[0] != '/' || path == "/") return false;
  if (path.back() == '/') return false;
  std::size_t start = 1;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

std::string tmpfs_data(std::uint64_t size, const char* mode) {
  return "size=" + std::to_string(size) + ",mode=" + mode;
}

class Builder {
 public:
  void add(FsStep step) { steps_.push_back(std::move(step)); }

  void mkdir(const std::string& path, std::uint32_t mode = 0755) {
    if (!dirs_.insert(path).second) return;
    add({.op = FsOp::kMkdir, .target = path, .mode = mode});
  }
  // mkdir -p inside the root tmpfs.
  void mkdir_parents(const std::string& path) {
    for (std::size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      mkdir(path.substr(0, slash));
    }
  }
  void mkfile(const std::string& path) {
    if (!files_.insert(path).second) return;
    add({.op = FsOp::kMkfile, .target = path, .mode = 0444});
  }
  void write_file(const std::string& path, std::string contents) {
    files_.insert(path);
    add({.op = FsOp::kWriteFile, .target = path, .data = std::move(contents), .mode = 0644});
  }
  void bind_ro(const std::string& source, const std::string& target, bool optional = false) {
    add({.op = FsOp::kBind,
         .target = target,
         .source = source,
         .read_only = true,
         .nosuid = true,
         .nodev = true,
         .optional = optional});
  }
  void tmpfs(const std::string& target, std::string data, bool read_only, bool noexec) {
    add({.op = FsOp::kTmpfs,
         .target = target,
         .data = std::move(data),
         .read_only = read_only,
         .nosuid = true,
         .nodev = true,
         .noexec = noexec});
  }
  std::vector<FsStep> take() { return std::move(steps_); }

 private:
  std::vector<FsStep> steps_;
  std::set<std::string> dirs_{"/"};
  std::set<std::string> files_;
};

Status check_extra(const ExtraPath& extra, const FsOptions& options) {
  const std::string& p = extra.path;
  if (!normalised_absolute(p)) {
    return fail(ErrorCode::kInvalidArgument,
                "extra read-only path '" + p + "' must be absolute, normalised and not /");
  }
  for (const char* owned : {"/proc", "/dev", "/tmp"}) {
    if (is_under(p, owned)) {
      return fail(ErrorCode::kInvalidArgument, "extra read-only path '" + p + "' is inside " +
                                                   owned + ", which the sandbox owns");
    }
  }
  if (options.hide_usr_local && options.layout.has_usr_local && is_under(p, "/usr/local")) {
    return fail(ErrorCode::kInvalidArgument, "extra read-only path '" + p +
                                                 "' is under the hidden /usr/local; "
                                                 "set hide_usr_local = false to expose it");
  }
  for (const HostEntry& e : options.layout.top_level) {
    if (e.kind == HostEntry::Kind::kSymlink && is_under(p, e.path)) {
      return fail(ErrorCode::kInvalidArgument, "extra read-only path '" + p +
                                                   "' goes through the symlink " + e.path +
                                                   "; give the resolved path");
    }
  }
  return {};
}

std::string passwd(const FsOptions& o) {
  // root is named so that files owned by uid 0 list as "root"; its shell refuses logins.
  return "root:x:0:0:root:/root:/usr/sbin/nologin\n" + o.user_name + ":x:" + std::to_string(o.uid) +
         ":" + std::to_string(o.gid) + ":" + o.user_name + ":/tmp:/bin/sh\n";
}

std::string group(const FsOptions& o) {
  return "root:x:0:\n" + o.user_name + ":x:" + std::to_string(o.gid) + ":\n";
}

}  // namespace

std::string environment_claim(const std::string& system_root, const std::string& digest) {
  return digest.empty() ? "unpinned " + system_root : digest;
}

std::string_view to_string(FsOp op) {
  switch (op) {
    case FsOp::kMakePrivate:
      return "make_private";
    case FsOp::kTmpfs:
      return "tmpfs";
    case FsOp::kBind:
      return "bind";
    case FsOp::kProc:
      return "proc";
    case FsOp::kMkdir:
      return "mkdir";
    case FsOp::kMkfile:
      return "mkfile";
    case FsOp::kWriteFile:
      return "write_file";
    case FsOp::kSymlink:
      return "symlink";
    case FsOp::kMask:
      return "mask";
    case FsOp::kReadonly:
      return "readonly";
    case FsOp::kRemountReadonly:
      return "remount_readonly";
    case FsOp::kPivotRoot:
      return "pivot_root";
    case FsOp::kDetachOldRoot:
      return "detach_old_root";
  }
  return "unknown";
}

Result<FsPlan> make_fs_plan(const FsOptions& options) {
  if (options.tmp_size_bytes == 0) {
    // tmpfs reads size=0 as "unlimited": never let a zero through.
    return fail(ErrorCode::kInvalidArgument, "tmp size must be > 0");
  }
  if (options.hostname.empty() || options.hostname.size() > 64 ||
      options.hostname.find_first_of("/ \n\t") != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument, "hostname must be 1..64 characters, no / or spaces");
  }
  if (options.user_name.empty() || options.user_name.find_first_of(":\n") != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument, "user name must be non-empty without ':'");
  }
  for (const ExtraPath& extra : options.extra_ro_paths) {
    if (auto s = check_extra(extra, options); !s) return std::unexpected(s.error());
  }
  if (options.system_root != "/" && !normalised_absolute(options.system_root)) {
    return fail(ErrorCode::kInvalidArgument,
                "environment root '" + options.system_root + "' must be absolute and normalised");
  }
  // A distribution path as the host reaches it: below the environment's root, if any.
  const auto from_root = [&](const std::string& path) {
    return options.system_root == "/" ? path : options.system_root + path;
  };

  Builder b;
  // Nothing mounted from here on may propagate back to the host's mount namespace.
  b.add({.op = FsOp::kMakePrivate, .target = "/"});
  // The new root: a small tmpfs, writable while the plan populates it, read-only at the
  // end, so writes outside /tmp (and /dev/shm) have nowhere to land.
  b.tmpfs("/", tmpfs_data(kRootTmpfsBytes, "0755"), /*read_only=*/false, /*noexec=*/false);

  // The distribution: /usr read-only; the top-level aliases as the host has them.
  // Binds are not recursive, so host submounts under /usr stay out, except where the
  // kernel requires them (a user namespace may not uncover what a locked submount hides):
  // then every one of them is made read-only as well (backends/namespace/mount_apply.cpp).
  b.mkdir("/usr");
  b.bind_ro(from_root("/usr"), "/usr");
  if (options.hide_usr_local && options.layout.has_usr_local) {
    b.tmpfs("/usr/local", tmpfs_data(4096, "0755"), /*read_only=*/true, /*noexec=*/true);
  }
  for (const HostEntry& e : options.layout.top_level) {
    if (e.kind == HostEntry::Kind::kSymlink) {
      b.add({.op = FsOp::kSymlink, .target = e.path, .source = e.link_target});
    } else if (e.kind == HostEntry::Kind::kDirectory) {
      b.mkdir(e.path);
      b.bind_ro(from_root(e.path), e.path);
    }
  }

  // A minimal /etc written from scratch: the host's passwd, shadow, hosts, ssh keys etc.
  // never enter. nsswitch "files" keeps glibc from loading NSS modules that would try
  // sockets to systemd or sssd. resolv.conf has no server: there is no network, and an
  // empty file makes lookups fail fast on loopback. No localtime (UTC unless TZ is set)
  // and no /etc/ssl: both are host configuration; add them as extra paths if needed.
  b.mkdir("/etc");
  b.write_file("/etc/passwd", passwd(options));
  b.write_file("/etc/group", group(options));
  b.write_file("/etc/hostname", options.hostname + "\n");
  b.write_file("/etc/hosts", "127.0.0.1\tlocalhost " + options.hostname +
                                 "\n::1\tlocalhost ip6-localhost ip6-loopback\n");
  b.write_file("/etc/nsswitch.conf",
               "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
               "networks: files\nprotocols: files\nservices: files\n");
  b.write_file("/etc/resolv.conf", "# no network in the sandbox\n");
  if (options.layout.has_ld_so_cache) {
    // The dynamic loader's index of library paths; without it every exec probes the
    // default directories, and libraries registered in ld.so.conf.d are not found.
    b.mkfile("/etc/ld.so.cache");
    b.bind_ro(from_root("/etc/ld.so.cache"), "/etc/ld.so.cache", /*optional=*/true);
  }
  if (options.layout.has_etc_alternatives) {
    // Debian's alternatives: /usr/bin/awk, which, editor, libblas.so.3, java ... are
    // symlinks into /etc/alternatives, which links on into /usr. Without it those commands
    // are "not found". Read-only data: a directory of symlinks update-alternatives keeps
    // (plus its README), world-readable on the host, naming what /usr already shows.
    b.mkdir("/etc/alternatives");
    b.bind_ro(from_root("/etc/alternatives"), "/etc/alternatives", /*optional=*/true);
  }

  for (const ExtraPath& extra : options.extra_ro_paths) {
    const bool visible_in_usr = is_under(extra.path, "/usr");  // /usr/local checked above
    if (visible_in_usr) continue;
    b.mkdir_parents(extra.path);
    if (extra.is_directory) {
      b.mkdir(extra.path);
    } else {
      b.mkfile(extra.path);
    }
    b.bind_ro(extra.path, extra.path);
  }

  // /dev: the five harmless character devices bound from the host, the fd symlinks, and
  // a size-limited /dev/shm for POSIX semaphores and shared memory (Python's
  // multiprocessing needs it). The tmpfs is read-only once populated.
  b.mkdir("/dev");
  b.tmpfs("/dev", tmpfs_data(65536, "0755"), /*read_only=*/false, /*noexec=*/true);
  for (const char* dev : kDevices) {
    const std::string path = std::string("/dev/") + dev;
    b.mkfile(path);
    // Not read-only: writes to device nodes are what /dev/null is for, and a read-only
    // mount does not stop them anyway. nodev must stay off for the node to work.
    b.add({.op = FsOp::kBind, .target = path, .source = path, .nosuid = true, .noexec = true});
  }
  b.add({.op = FsOp::kSymlink, .target = "/dev/fd", .source = "/proc/self/fd"});
  b.add({.op = FsOp::kSymlink, .target = "/dev/stdin", .source = "/proc/self/fd/0"});
  b.add({.op = FsOp::kSymlink, .target = "/dev/stdout", .source = "/proc/self/fd/1"});
  b.add({.op = FsOp::kSymlink, .target = "/dev/stderr", .source = "/proc/self/fd/2"});
  if (options.shm_size_bytes > 0) {
    b.mkdir("/dev/shm", 01777);
    b.tmpfs("/dev/shm", tmpfs_data(options.shm_size_bytes, "1777"), /*read_only=*/false,
            /*noexec=*/true);
  }
  b.add({.op = FsOp::kRemountReadonly, .target = "/dev"});

  // A fresh procfs for the new PID namespace, with runc's masks.
  b.mkdir("/proc", 0555);
  b.add({.op = FsOp::kProc, .target = "/proc", .nosuid = true, .nodev = true, .noexec = true});
  for (const char* path : kProcReadonly) {
    b.add({.op = FsOp::kReadonly, .target = path, .optional = true});
  }
  for (const char* path : kProcMasked) {
    b.add({.op = FsOp::kMask, .target = path, .optional = true});
  }

  // /tmp: the only general writable place, size-limited; HOME and the working directory.
  // Sticky and world-writable rather than owned by the sandbox uid, because tmpfs's
  // uid= option must name an id mapped in the mounting user namespace, which differs
  // between root and rootless runs. Not noexec: scripts, venvs and compiled programs are
  // ordinary workloads, and isolation does not rely on noexec.
  b.mkdir("/tmp", 01777);
  b.tmpfs("/tmp", tmpfs_data(options.tmp_size_bytes, "1777"), /*read_only=*/false,
          /*noexec=*/false);

  b.add({.op = FsOp::kRemountReadonly, .target = "/"});
  b.add({.op = FsOp::kPivotRoot, .target = "/"});
  b.add({.op = FsOp::kDetachOldRoot, .target = "/"});

  FsPlan plan = fs_plan_facts(options);
  plan.steps = b.take();
  return plan;
}

FsPlan fs_plan_facts(const FsOptions& options) {
  FsPlan plan;
  plan.hostname = options.hostname;
  plan.uid = options.uid;
  plan.gid = options.gid;
  return plan;
}

}  // namespace cordon::policy
