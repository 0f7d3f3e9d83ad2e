#!/usr/bin/env bash
# Builds the Debian 12 guest of tests/guest/run.sh into DIR: rootfs.img (a sparse ext4
# image made with `mkfs.ext4 -d`, no loop mount), vmlinuz and initrd.img (Debian's own 6.1
# kernel, installed inside the guest so its modules and initrd match). run.sh keys DIR by this
# file's hash: a changed recipe builds a new image.
#   tests/guest/image.sh DIR
# Root only (debootstrap). Needs the network (the Debian mirror); ~3-6 min on a loaded host.
set -euo pipefail
out="$1"
mirror="${GUEST_MIRROR:-http://deb.debian.org/debian}"

# systemd and dbus: the systemd boot (pure cgroup v2 with the manager holding the root
# group, the common host). runc, crun and python3: what the container backend and the tests
# drive. Not podman (engine mode): debootstrap's resolver fails to configure its
# golang-github-containers-common. The libraries: what the host build links (a Debian 12 build runs unchanged in
# the guest), including the sanitizer runtimes of the asan and tsan presets.
packages=(
  systemd systemd-sysv udev kmod dbus procps iproute2 util-linux
  linux-image-amd64
  python3 runc crun bubblewrap
  libseccomp2 libsqlite3-0 libssl3 libbrotli1 zlib1g libcpp-httplib0.11 libstdc++6
  libasan8 libubsan1 libtsan2
)

work="$(mktemp -d "${out}.work.XXXXXX")"
trap 'rm -rf "$work"' EXIT
root="$work/root"

# The downloaded packages stay beside the images: a changed recipe rebuilds without the
# mirror's ~150 MB again.
debs="$(dirname "$out")/debs"
mkdir -p "$debs"
debootstrap --variant=minbase --cache-dir="$debs" \
  --include="$(IFS=,; echo "${packages[*]}")" bookworm "$root" "$mirror"

# The boot: / on the virtio disk, the serial console, no login needed (the harness runs from
# a unit and powers off).
echo cordon-guest >"$root/etc/hostname"
echo '/dev/vda / ext4 rw,relatime 0 1' >"$root/etc/fstab"
# Mount points of the 9p shares (run.sh shares the source and build trees at their host
# paths, so the build's absolute RUNPATHs and compiled-in paths hold).
mkdir -p "$root/guest/harness" "$root/guest/results"

# The systemd boot runs the harness as an ordinary service (no Delegate=): what a tool started
# by a unit or from a login session meets on a stock systemd v2 host.
cat >"$root/etc/systemd/system/cordon-guest.service" <<'UNIT'
[Unit]
Description=cordon guest test harness
After=basic.target
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/cordon-guest-boot systemd
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity
[Install]
WantedBy=multi-user.target
UNIT
ln -s /etc/systemd/system/cordon-guest.service \
  "$root/etc/systemd/system/multi-user.target.wants/cordon-guest.service"
# Nothing else competes for the two emulated CPUs.
for unit in getty@tty1.service serial-getty@ttyS0.service systemd-timesyncd.service \
  apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer man-db.timer; do
  ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

# Mounts the shares and hands over to the harness's inside.sh, which comes from the shared
# tests/guest directory: changing the tests needs no new image.
cat >"$root/usr/local/sbin/cordon-guest-boot" <<'BOOT'
#!/bin/bash
# cordon-guest-boot MODE: mount the 9p shares, run the shared harness, power off.
mode="$1"
opts=trans=virtio,version=9p2000.L,msize=512000
modprobe -a 9p 9pnet_virtio # no udev in the bare boot loads them
mount -t 9p -o "$opts,ro,cache=loose" harness /guest/harness
mount -t 9p -o "$opts,rw" results /guest/results
# shellcheck disable=SC1091
. /guest/results/env   # SHARES="tag:path ..." written by run.sh
for share in $SHARES; do
  mkdir -p "${share#*:}"
  mount -t 9p -o "$opts,ro,cache=loose" "${share%%:*}" "${share#*:}"
done
bash /guest/harness/inside.sh "$mode" /guest/results/"$mode"
echo "cordon-guest: harness exit $?"
sync
BOOT
cat >"$root/usr/local/sbin/cordon-guest-init" <<'INIT'
#!/bin/bash
# PID 1 of the bare boot (init=): no systemd, the unified hierarchy mounted by hand, as on a
# minimal container host or an embedded system.
# The initrd moves its /proc, /sys and /dev over; mount only what is missing.
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mountpoint -q /run || mount -t tmpfs tmpfs /run
mount -o remount,rw /
hostname cordon-guest
/usr/local/sbin/cordon-guest-boot bare
sync
echo o >/proc/sysrq-trigger
sleep 30
INIT
cat >>"$root/usr/local/sbin/cordon-guest-boot" <<'BOOT'
[[ "$mode" == systemd ]] && systemctl --no-block poweroff
exit 0
BOOT
chmod 755 "$root/usr/local/sbin/cordon-guest-boot" "$root/usr/local/sbin/cordon-guest-init"

cp "$(readlink -f "$root/vmlinuz")" "$work/vmlinuz"
cp "$(readlink -f "$root/initrd.img")" "$work/initrd.img"
rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/*

truncate -s 4G "$work/rootfs.img"
mkfs.ext4 -q -F -L cordon-guest -d "$root" "$work/rootfs.img"

mkdir -p "$out"
mv "$work/vmlinuz" "$work/initrd.img" "$work/rootfs.img" "$out/"
echo "image.sh: built $out"
