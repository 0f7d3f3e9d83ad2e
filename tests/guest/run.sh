#!/usr/bin/env bash
# The backends on a pure cgroup v2 host (issue #14): boots a Debian 12 guest under qemu (TCG;
# this machine's /dev/kvm cannot run a stock kernel, docs/GUEST.md) twice, with the build
# tree shared in read-only over 9p, and runs the namespace and container backend tests,
# `cordon backends`, `cordon plan` and `cordon audit` inside:
#   boot 1 "systemd": stock systemd as PID 1, the harness in an ordinary service (the common
#                     host: the manager owns the hierarchy, nothing is delegated)
#   boot 2 "bare":    no systemd, a plain init script mounts cgroup2 at /sys/fs/cgroup
# Then prints per boot and per test binary the passed/failed counts and the failing tests, and
# exits non-zero if anything failed.
#   tests/guest/run.sh [BUILD_DIR]      (default build/asan; root; full tier, not CI)
# The guest image is built once (tests/guest/image.sh, ~5 min, needs the Debian mirror) and
# cached under GUEST_CACHE (/var/cache/cordon-guest), keyed by image.sh's hash.
# Environment: GUEST_TIMEOUT per boot (s, default 1800), GUEST_STEP_TIMEOUT per command
# inside (s, default 900), GUEST_RESULTS (default BUILD_DIR/guest-results), GUEST_BOOTS (the
# boots to run, default "systemd bare").
# Needs debootstrap, qemu-system-x86 and e2fsprogs (scripts/install-deps.sh --guest).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-build/asan}" && pwd)"
cache="${GUEST_CACHE:-/var/cache/cordon-guest}"
boot_timeout="${GUEST_TIMEOUT:-1800}"
results="${GUEST_RESULTS:-$build/guest-results}"

for tool in qemu-system-x86_64 debootstrap mkfs.ext4 python3; do
  command -v "$tool" >/dev/null || {
    echo "run.sh: $tool missing (scripts/install-deps.sh --guest)" >&2
    exit 2
  }
done
[[ -x "$build/tests/namespace_backend_test" && -x "$build/bin/cordon" ]] || {
  echo "run.sh: $build has no tests/namespace_backend_test or bin/cordon: build it first" >&2
  exit 2
}
# The source tree the build was configured from: tests and the CLI read files from it by
# absolute path, as the RUNPATHs point into the build tree, so both are shared at their host
# paths.
source_dir="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")"

image="$cache/$(sha256sum "$here/image.sh" | cut -c1-16)"
if [[ ! -f "$image/rootfs.img" ]]; then
  echo "run.sh: building the guest image in $image"
  mkdir -p "$cache"
  "$here/image.sh" "$image"
fi

rm -rf "$results"
mkdir -p "$results"
shares="src:$source_dir"
share_args=(-virtfs "local,path=$source_dir,mount_tag=src,security_model=none,readonly=on")
if [[ "$build/" != "$source_dir/"* ]]; then
  shares+=" build:$build"
  share_args+=(-virtfs "local,path=$build,mount_tag=build,security_model=none,readonly=on")
fi
cat >"$results/env" <<ENV
SHARES="$shares"
SOURCE="$source_dir"
BUILD="$build"
STEP_TIMEOUT="${GUEST_STEP_TIMEOUT:-900}"
ENV

# boot MODE KERNEL_ARGS: one boot, serial console to MODE.serial.log. -snapshot keeps the
# cached image pristine; -no-reboot with panic=1 ends qemu if the guest's init dies.
boot() {
  local mode="$1" args="$2" start=$SECONDS rc=0
  echo "run.sh: boot $mode (serial console: $results/$mode.serial.log)"
  timeout -k 30 "$boot_timeout" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp 2 -m 2G \
    -display none -monitor none -serial "file:$results/$mode.serial.log" -nic none \
    -no-reboot -snapshot \
    -kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
    -append "root=/dev/vda rw console=ttyS0 panic=1 $args" \
    -drive "file=$image/rootfs.img,format=raw,if=virtio" \
    -virtfs "local,path=$here,mount_tag=harness,security_model=none,readonly=on" \
    -virtfs "local,path=$results,mount_tag=results,security_model=none" \
    "${share_args[@]}" </dev/null || rc=$?
  echo "run.sh: boot $mode ended after $((SECONDS - start))s (qemu exit $rc$( ((rc == 124)) && echo ': timed out'))"
}

read -r -a boots <<<"${GUEST_BOOTS:-systemd bare}"
for mode in "${boots[@]}"; do
  case "$mode" in
    systemd) boot systemd "systemd.unified_cgroup_hierarchy=1" ;;
    bare) boot bare "init=/usr/local/sbin/cordon-guest-init" ;;
    *)
      echo "run.sh: unknown boot $mode (systemd or bare)" >&2
      exit 2
      ;;
  esac
done

python3 "$here/report.py" "$results" "${boots[@]}"
