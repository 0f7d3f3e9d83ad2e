#!/usr/bin/env bash
# Makes a small image for the container backend's engine-mode tests from this host's own
# files (nothing can be pulled from a registry here): sh, bash, python3 and a few tools
# with the libraries they load, imported with `podman import` as the image named $1.
set -euo pipefail
export PATH=/usr/bin:/bin
# Test processes run in parallel: one builds, the others find the image made.
exec 9>/tmp/cordon-suite-engine-image.lock
flock 9
if podman image exists "$1"; then exit 0; fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
bins="sh dash bash python3 python3.11 cat id grep ls sleep echo head dd env true tr seq wc setsid nohup rm kill"
mkdir -p "$root/usr/bin" "$root/usr/lib" "$root/usr/lib64" "$root/etc" "$root/tmp" "$root/proc" "$root/dev" "$root/sys"
chmod 1777 "$root/tmp"  # runc keeps an existing directory's mode for a tmpfs over it
ln -s usr/bin "$root/bin"; ln -s usr/lib "$root/lib"; ln -s usr/lib64 "$root/lib64"
for b in $bins; do
  p=$(type -P "$b" || true); [ -n "$p" ] || continue
  real=$(readlink -f "$p")
  cp -L "$real" "$root/usr/bin/$b"
  { ldd "$real" 2>/dev/null || true; } | { grep -o "/[^ ]*" || true; } | while read -r lib; do
    dest="$root/usr${lib#/usr}"; mkdir -p "$(dirname "$dest")"; cp -Ln "$lib" "$dest"
  done
done
cp -a /usr/lib/python3.11 "$root/usr/lib/"
rm -rf "$root/usr/lib/python3.11/test" "$root/usr/lib/python3.11/idlelib"
echo 'root:x:0:0::/root:/bin/sh' > "$root/etc/passwd"; echo 'nobody:x:65534:65534::/tmp:/bin/sh' >> "$root/etc/passwd"
echo 'root:x:0:' > "$root/etc/group"; echo 'nogroup:x:65534:' >> "$root/etc/group"
tar -C "$root" -cf - . | podman import - "$1" >/dev/null
