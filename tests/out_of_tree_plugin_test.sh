#!/bin/sh
# A plugin built out of tree against an installed cordon loads and runs: `cmake --install`
# into a staging prefix, then tests/out_of_tree_plugin/ (a backend in C, find_package(cordon),
# cordon::plugin_abi only) configured, built and installed against that prefix, and run by
# the staged `cordon` with a clean environment. The same sample built claiming ABI major 2
# is refused with a message naming both versions.
#
#   out_of_tree_plugin_test.sh BUILD_DIR SOURCE_DIR CMAKE BINDIR
#   (BINDIR: CMAKE_INSTALL_BINDIR, relative to the prefix)
set -u
build=$(cd "$1" && pwd -P) source=$(cd "$2" && pwd -P) cmake=$3 bindir=$4
work=$(mktemp -d /tmp/cordon-plugin-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
prefix=$work/prefix
cordon=$prefix/$bindir/cordon

fail() {
  echo "out_of_tree_plugin: $1" >&2
  for f in out err; do [ -s "$work/$f" ] && { echo "--- $f"; cat "$work/$f"; }; done
  exit 1
}
# The staged cordon with nothing of the caller's environment but what is given.
staged() {
  env -i PATH=/usr/bin:/bin ${CORDON_SUITE_MARK:+CORDON_SUITE_MARK="$CORDON_SUITE_MARK"} "$@"
}

"$cmake" --install "$build" --prefix "$prefix" >"$work/out" 2>"$work/err" ||
  fail "cmake --install failed"

# --- build the sample out of tree and install it into the prefix's plugin folder ---
"$cmake" -S "$source/tests/out_of_tree_plugin" -B "$work/echo" -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/out" 2>"$work/err" || fail "the sample failed to configure against the staged prefix"
"$cmake" --build "$work/echo" >"$work/out" 2>"$work/err" || fail "the sample failed to build"
"$cmake" --install "$work/echo" >"$work/out" 2>"$work/err" || fail "the sample failed to install"
plugin=$(find "$prefix" -name cordon-backend-echo.so)
[ -n "$plugin" ] || fail "the sample was not installed into the prefix"
case $plugin in */cordon/plugins/cordon-backend-echo.so) ;; *) fail "installed at $plugin" ;; esac
# Only C crossed: the plugin needs no C++ runtime and no libcordon-core, and exports one
# function, the entry point.
needed=$(readelf -d "$plugin" | grep NEEDED)
case $needed in *libstdc++* | *libc++* | *cordon-core*) fail "the C sample links $needed" ;; esac
exported=$(nm -D --defined-only "$plugin" | awk '$2 == "T" { print $3 }')
[ "$exported" = cordon_plugin_entry ] || fail "the sample exports: $exported"

# --- listed by the staged cordon, from its own prefix ---
staged "$cordon" backends --json >"$work/out" 2>"$work/err" || fail "cordon backends failed"
/usr/bin/python3 - "$work/out" "$plugin" <<'PY' || fail "cordon backends does not list the sample"
import json, sys
listing = json.load(open(sys.argv[1]))
echo = [p for p in listing["plugins"] if p["name"] == "echo"]
assert len(echo) == 1 and echo[0]["path"] == sys.argv[2], listing["plugins"]
PY

# --- run through it: the output arrives live (events) and in the result (JSON) ---
staged "$cordon" run --no-history --allow-unisolated -b echo -c 'printf "hi\n" # from C' \
  >"$work/out" 2>"$work/err" || fail "cordon run -b echo exited $?"
[ "$(cat "$work/out")" = 'printf "hi\n" # from C' ] || fail "the code was not echoed"
grep -Eq '^cordon: ok \(exit 0\) .*\[echo' "$work/err" || fail "no ok status line from echo"

staged "$cordon" run --no-history --allow-unisolated --json -b echo --output-cap 4 \
  -c 'añb-cut' >"$work/out" 2>"$work/err" || fail "cordon run --json -b echo exited $?"
/usr/bin/python3 - "$work/out" <<'PY' || fail "the JSON result is not what the sample returned"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["outcome"] == "ok" and r["exit_code"] == 0, r
assert r["stdout"] == "añb" and r["stdout_truncated"] is True, r  # 4 bytes, not mid-"ñ"
assert r["backend"] == {"name": "echo", "version": "1.0"}, r["backend"]
assert [e["mechanism"] for e in r["enforced"]] == ["echo cuts it"], r["enforced"]
PY

# An option the plugin has and refuses: its reason, through create's error buffer.
staged "$cordon" run --no-history --allow-unisolated -b echo --engine podman -c x \
  >"$work/out" 2>"$work/err" && fail "cordon run --engine podman -b echo succeeded"
grep -q "echo has no engine (got 'podman')" "$work/err" || fail "the plugin's refusal was lost"

# --- another ABI major: refused before any of its code runs, both versions named ---
"$cmake" -S "$source/tests/out_of_tree_plugin" -B "$work/old" -DCMAKE_PREFIX_PATH="$prefix" \
  -DECHO_NAME=echo_old -DECHO_ABI_MAJOR=2 >"$work/out" 2>"$work/err" &&
  "$cmake" --build "$work/old" >"$work/out" 2>"$work/err" || fail "the ABI 2 sample failed to build"
staged CORDON_PLUGIN_PATH="$work/old" "$cordon" run --no-history --allow-unisolated -b echo_old \
  -c x >"$work/out" 2>"$work/err" && fail "a plugin of ABI major 2 was run"
abi=$(sed -n 's/^#define CORDON_PLUGIN_ABI_MAJOR \([0-9]*\)$/\1/p' "$prefix/include/cordon/plugin_abi.h")
minor=$(sed -n 's/^#define CORDON_PLUGIN_ABI_MINOR \([0-9]*\)$/\1/p' "$prefix/include/cordon/plugin_abi.h")
grep -q "plugin ABI 2\.$minor is incompatible with this cordon's ABI $abi\.$minor (major version differs" \
  "$work/err" || fail "the refusal does not name both versions"

echo "out_of_tree_plugin: a C plugin built against $prefix ran in the staged cordon; ABI 2 refused"
