#!/bin/sh
# Runs a test binary as the unprivileged uid/gid 65534 (nobody), for the namespace suite's
# rootless run (issue #3: "the same suite also runs as an unprivileged user").
#
#   run_unprivileged.sh LIB_DIR PLUGIN_DIR LIBEXEC_DIR CLI_BINARY TEST_BINARY [ARGS...]
#
# CI runs as root in a fresh clone at a path whose parent directories uid 65534 may not
# be able to traverse, so the binary cannot run from the build tree: it is copied, with
# what it needs (libcordon-core, the plugins, cordon-init, the cordon
# CLI), into a fresh world-readable directory under /tmp, and pointed at the copy through
# environment variables (tests/test_paths.h, CORDON_PLUGIN_PATH, CORDON_LIBEXEC_DIR,
# LD_LIBRARY_PATH: the build RPATHs name the build tree); the sanitizer options of the asan
# and tsan presets pass through (tests/sanitizers/). The copy is removed afterwards.
#
# Exit status: the test binary's; 77 (CTest SKIP_RETURN_CODE) when this cannot be done
# here — not root, or no setpriv — unless CORDON_REQUIRE_KERNEL_FEATURES=1 (CI), where
# that is a failure (1) instead, so the rootless run cannot silently disappear.
set -eu

skip_or_fail() {
  if [ "${CORDON_REQUIRE_KERNEL_FEATURES:-}" = 1 ]; then
    echo "run_unprivileged: $1, and CORDON_REQUIRE_KERNEL_FEATURES=1 forbids skipping" >&2
    exit 1
  fi
  echo "run_unprivileged: skipped: $1" >&2
  exit 77
}

if [ "$#" -lt 5 ]; then
  echo "usage: $0 LIB_DIR PLUGIN_DIR LIBEXEC_DIR CLI_BINARY TEST_BINARY [ARGS...]" >&2
  exit 2
fi
lib_dir=$1 plugin_dir=$2 libexec_dir=$3 cli=$4 test_binary=$5
shift 5

# Only root can switch to another uid; setpriv comes with util-linux.
[ "$(id -u)" = 0 ] || skip_or_fail "not running as root, cannot switch to uid 65534"
command -v setpriv >/dev/null 2>&1 || skip_or_fail "setpriv (util-linux) is not installed"

# Named cordon-* so that the suite-wide leftover check would report it if it stayed.
copy=$(mktemp -d /tmp/cordon-unprivileged-XXXXXX)
trap 'rm -rf "$copy"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
chmod 0755 "$copy"
mkdir "$copy/bin"
cp -L "$test_binary" "$cli" "$copy/bin/"
# -L: the library dir holds the soname symlinks; plain copies are simpler to make
# readable and behave the same for the loader.
cp -RL "$lib_dir" "$copy/lib"
cp -RL "$plugin_dir" "$copy/plugins"
cp -RL "$libexec_dir" "$copy/libexec"
chmod -R a+rX,go-w "$copy"

# The working directory must be one uid 65534 can enter.
cd "$copy"
status=0
setpriv --reuid=65534 --regid=65534 --clear-groups \
  env -i HOME=/tmp PATH=/usr/bin:/bin \
  CORDON_REQUIRE_KERNEL_FEATURES="${CORDON_REQUIRE_KERNEL_FEATURES:-}" \
  ${CORDON_SUITE_MARK:+CORDON_SUITE_MARK="$CORDON_SUITE_MARK"} \
  ${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
  ${LSAN_OPTIONS:+LSAN_OPTIONS="$LSAN_OPTIONS"} ${TSAN_OPTIONS:+TSAN_OPTIONS="$TSAN_OPTIONS"} \
  LD_LIBRARY_PATH="$copy/lib" \
  CORDON_TEST_PLUGIN_DIR="$copy/plugins" \
  CORDON_TEST_CLI_BINARY="$copy/bin/$(basename "$cli")" \
  CORDON_PLUGIN_PATH="$copy/plugins" CORDON_PLUGIN_PATH_ONLY=1 \
  CORDON_LIBEXEC_DIR="$copy/libexec" \
  "$copy/bin/$(basename "$test_binary")" "$@" || status=$?
exit "$status"
