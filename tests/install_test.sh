#!/bin/sh
# An installed cordon stands on its own: `cmake --install` into a staging prefix, then the
# staged `cordon` run from there with a clean environment (env -i PATH=/usr/bin:/bin), in a
# private mount namespace where the build and source trees are hidden under empty tmpfs
# mounts. It must find its plugins and helpers in the prefix, with no environment variable,
# and load nothing from the build tree even while that tree is visible. Last, a project
# outside the tree builds against the staged prefix with find_package(cordon).
#
#   install_test.sh BUILD_DIR SOURCE_DIR CMAKE BINDIR LIBDIR LIBEXECDIR CXX_COMPILER sanitize=LIST
#   (BINDIR, LIBDIR, LIBEXECDIR: CMAKE_INSTALL_*, relative to the prefix; LIST: the build's
#   CORDON_SANITIZE, often empty: a sanitized libcordon-core needs its runtime in the
#   program that links it, so the consumer is built with the same -fsanitize=)
#
# Exit status 0, 1 on a failed check; 77 (CTest SKIP_RETURN_CODE) when a private mount
# namespace or the namespace backend is not available here, unless
# CORDON_REQUIRE_KERNEL_FEATURES=1 (CI), where that is a failure.
set -u
build=$(cd "$1" && pwd -P) source=$(cd "$2" && pwd -P) cmake=$3
bindir=$4 libdir=$5 libexecdir=$6 cxx=$7 sanitize=${8:-}
sanitize=${sanitize#sanitize=}
# Under /tmp, outside both trees: hiding them must not hide the prefix.
work=$(mktemp -d /tmp/cordon-install-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
work=$(cd "$work" && pwd -P)  # as libcordon-core will see its own path
trap 'exit 143' TERM
trap 'exit 130' INT
prefix=$work/prefix

fail() {
  echo "install_test: $1" >&2
  for f in out err; do [ -s "$work/$f" ] && { echo "--- $f"; cat "$work/$f"; }; done
  exit 1
}
skip_or_fail() {
  if [ "${CORDON_REQUIRE_KERNEL_FEATURES:-}" = 1 ]; then
    fail "$1, and CORDON_REQUIRE_KERNEL_FEATURES=1 forbids skipping"
  fi
  echo "install_test: skipped: $1" >&2
  exit 77
}
"$cmake" --install "$build" --prefix "$prefix" >"$work/out" 2>"$work/err" ||
  fail "cmake --install failed"

# --- the layout ---
for f in "$bindir/cordon" "$libdir/libcordon-core.so" \
  "$libdir/cordon/plugins/cordon-backend-subprocess.so" \
  "$libdir/cordon/plugins/cordon-backend-namespace.so" \
  "$libexecdir/cordon/cordon-init" "$libexecdir/cordon/cordon-ns-spawner" \
  "$libexecdir/cordon/cordon-sh-preload.so" "$libexecdir/cordon/cordon-gvisor-stat.so" \
  share/cordon/prompts/manifest.txt include/cordon/backend.h include/cordon/plugin_abi.h \
  "$libdir/cmake/cordon/cordonConfig.cmake" "$libdir/cmake/cordon/cordonTargets.cmake"; do
  [ -e "$prefix/$f" ] || fail "the install lacks $f"
done
# Every binary finds libcordon-core relative to itself, never through the build tree.
for f in "$prefix/$bindir/cordon" "$prefix/$libdir"/cordon/plugins/*.so; do
  runpath=$(readelf -d "$f" | grep -E 'RUNPATH|RPATH') || fail "$f has no RUNPATH"
  case $runpath in
    *"$build"*) fail "$f keeps a build-tree RUNPATH: $runpath" ;;
    *'$ORIGIN'*) ;;
    *) fail "$f has an absolute RUNPATH: $runpath" ;;
  esac
done

# --- with the build tree visible: nothing of it is searched or loaded ---
# The staged cordon gets nothing of the caller's environment but the suite's marker (so the
# suite's leftover check still knows its processes; cordon does not read it). LD_DEBUG only
# records what the loader searched and loaded.
env -i PATH=/usr/bin:/bin LD_DEBUG=files,libs LD_DEBUG_OUTPUT="$work/ld" \
  ${CORDON_SUITE_MARK:+CORDON_SUITE_MARK="$CORDON_SUITE_MARK"} \
  "$prefix/$bindir/cordon" backends --json >"$work/out" 2>"$work/err" ||
  fail "cordon backends failed"
/usr/bin/python3 - "$work/out" "$prefix/$libdir/cordon/plugins" <<'PY' || fail "cordon backends did not search only the prefix"
import json, sys
listing = json.load(open(sys.argv[1]))
want = sys.argv[2]
assert listing["search_path"] == [want], listing["search_path"]
paths = {p["name"]: p["path"] for p in listing["plugins"]}
assert all(p.startswith(want + "/") for p in paths.values()), paths
assert {"namespace", "subprocess"} <= paths.keys(), paths
PY
cat "$work"/ld.* >"$work/loaded" 2>/dev/null || fail "LD_DEBUG recorded nothing"
if grep -q "$build" "$work/loaded"; then
  grep "$build" "$work/loaded" >&2
  fail "the staged cordon loaded files from the build tree"
fi
# ("trying file=<prefix>/bin/../lib/libcordon-core.so.0": the RUNPATH, $ORIGIN expanded)
grep -q "trying file=$prefix/.*/libcordon-core\.so" "$work/loaded" ||
  fail "libcordon-core was not loaded from the prefix"

# --- with the build and source trees hidden: a real sandboxed run ---
command -v unshare >/dev/null 2>&1 || skip_or_fail "unshare (util-linux) is not installed"
# The mount namespace is private (unshare's default propagation), so the tmpfs mounts
# never reach the host. The build tree first: it may be inside the source tree.
hide='mount -t tmpfs -o size=64k,mode=0755 cordon-hidden "$1" &&
  mount -t tmpfs -o size=64k,mode=0755 cordon-hidden "$2" && shift 2 && exec "$@"'
if ! unshare -m sh -c "$hide" sh "$build" "$source" true 2>"$work/err"; then
  skip_or_fail "no private mount namespace here: $(cat "$work/err")"
fi
unshare -m sh -c "$hide" sh "$build" "$source" \
  env -i PATH=/usr/bin:/bin ${CORDON_SUITE_MARK:+CORDON_SUITE_MARK="$CORDON_SUITE_MARK"} \
  "$prefix/$bindir/cordon" run --no-history -b namespace -l sh \
  -c 'echo "installed cordon ran as uid $(id -u)"' \
  >"$work/out" 2>"$work/err"
status=$?
if [ "$status" -eq 125 ] && grep -q "available" "$work/err"; then
  skip_or_fail "the namespace backend is not available here: $(cat "$work/err")"
fi
[ "$status" -eq 0 ] || fail "cordon run -b namespace exited $status"
grep -q '^installed cordon ran ' "$work/out" || fail "the sandboxed code printed nothing"
grep -Eq '^cordon: ok \(exit 0\) .*\[namespace' "$work/err" || fail "no ok status line from namespace"

# --- find_package(cordon) against the staged prefix ---
mkdir "$work/consumer"
cat >"$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(cordon_consumer LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 23)
find_package(cordon REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE cordon::core)
target_compile_definitions(consumer PRIVATE PLUGIN_DIR="${cordon_PLUGIN_DIR}")
CMAKE
cat >"$work/consumer/main.cpp" <<'CXX'
// Linked against the installed libcordon-core, it searches the prefix's plugin folder.
#include <cordon/install_layout.h>
#include <cordon/plugin_abi.h>
#include <cstdio>
#include <filesystem>
int main() {
  const auto& layout = cordon::install_layout();
  std::printf("abi %d plugins %s\n", CORDON_PLUGIN_ABI_MAJOR, layout.plugins.at(0).c_str());
  return std::filesystem::equivalent(layout.plugins.at(0), PLUGIN_DIR) ? 0 : 1;
}
CXX
sanitize_flags=${sanitize:+-fsanitize=$sanitize}
"$cmake" -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$sanitize_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitize_flags" >"$work/out" 2>"$work/err" ||
  fail "find_package(cordon) against the staged prefix failed to configure"
"$cmake" --build "$work/consumer/build" >"$work/out" 2>"$work/err" ||
  fail "a program using cordon::core failed to build against the staged prefix"
"$work/consumer/build/consumer" >"$work/out" 2>"$work/err" ||
  fail "a program linked to the staged libcordon-core does not search the prefix's plugins"

echo "install_test: staged at $prefix: cordon ran a namespace sandbox with the build tree hidden; find_package(cordon) built against it"
