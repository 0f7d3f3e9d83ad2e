#!/bin/sh
# The Debian package: `cpack -G DEB` from the build tree, then its control fields and file
# list (dpkg-deb), and the unpacked tree's `cordon backends` using its own plugins.
#
#   deb_test.sh BUILD_DIR CPACK
#
# ~40 s on a loaded 2-core machine (cpack installs, strips and compresses everything again).
set -u
build=$(cd "$1" && pwd -P) cpack=$2
work=$(mktemp -d /tmp/cordon-deb-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
work=$(cd "$work" && pwd -P)  # as libcordon-core will see its own path

fail() {
  echo "deb_test: $1" >&2
  for f in out err; do [ -s "$work/$f" ] && { echo "--- $f"; cat "$work/$f"; }; done
  exit 1
}

"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work" >"$work/out" 2>"$work/err" ||
  fail "cpack -G DEB failed"
set -- "$work"/cordon_*.deb
[ -f "$1" ] || fail "cpack made no cordon_*.deb"
deb=$1

# Field 6 of `dpkg-deb -c` is the path ("./usr/bin/cordon"; a symlink's target follows).
dpkg-deb -c "$deb" | awk '{print $6}' >"$work/files" || fail "dpkg-deb -c failed"
for f in ./usr/bin/cordon ./usr/lib/libcordon-core.so \
  ./usr/lib/cordon/plugins/cordon-backend-namespace.so \
  ./usr/lib/cordon/plugins/cordon-backend-subprocess.so \
  ./usr/libexec/cordon/cordon-init \
  ./usr/share/cordon/prompts/manifest.txt ./usr/include/cordon/backend.h \
  ./usr/lib/cmake/cordon/cordonConfig.cmake; do
  grep -qx "$f" "$work/files" || { cat "$work/files"; fail "the package lacks $f"; }
done
if grep -q "$build" "$work/files"; then fail "the package holds build-tree paths"; fi

depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libseccomp2 libsqlite3-0 libstdc++6; do
  echo "$depends" | grep -q "\\b$lib\\b" || fail "Depends lacks $lib: $depends"
done
dpkg-deb -f "$deb" Recommends | grep -q python3 || fail "Recommends lacks python3"

# Unpacked anywhere, the package's cordon uses its own plugins (found relative to itself).
dpkg-deb -x "$deb" "$work/root" || fail "dpkg-deb -x failed"
env -i PATH=/usr/bin:/bin "$work/root/usr/bin/cordon" backends --json >"$work/out" 2>"$work/err" ||
  fail "the unpacked cordon backends failed"
/usr/bin/python3 - "$work/out" "$work/root/usr/lib/cordon/plugins" <<'PY' ||
import json, sys
listing = json.load(open(sys.argv[1]))
assert listing["search_path"] == [sys.argv[2]], listing["search_path"]
assert {"namespace", "subprocess"} <= {p["name"] for p in listing["plugins"] if p["loaded"]}
PY
  fail "the unpacked cordon does not use its own plugins"

echo "deb_test: $(basename "$deb"), $(wc -l <"$work/files") entries, Depends: $depends"
