#!/bin/sh
# README's quick start, as a newcomer runs it: the two examples through `--backend auto`
# (the default). hello.py must run sandboxed (the status line names an isolating backend),
# and every attempt of escape.py must end "stopped".
#
#   quick_start_test.sh CORDON_BINARY EXAMPLES_DIR
#
# Exit status 0, 1 on a failed check; 77 (CTest SKIP_RETURN_CODE) when no isolating backend
# is available here, unless CORDON_REQUIRE_KERNEL_FEATURES=1 (CI), where that is a failure.
set -u
cordon=$1
examples=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "quick_start_test: $1" >&2
  echo "--- stdout"; cat "$work/out"; echo "--- stderr"; cat "$work/err"
  exit 1
}

"$cordon" run --no-history "$examples/hello.py" >"$work/out" 2>"$work/err"
status=$?
if [ "$status" -eq 125 ] && grep -q "no isolating backend is available" "$work/err"; then
  if [ "${CORDON_REQUIRE_KERNEL_FEATURES:-}" = 1 ]; then
    fail "no isolating backend for auto, and CORDON_REQUIRE_KERNEL_FEATURES=1 forbids skipping"
  fi
  echo "quick_start_test: skipped: no isolating backend here: $(cat "$work/err")" >&2
  exit 77
fi
[ "$status" -eq 0 ] || fail "hello.py exited $status"
grep -q "^hello from " "$work/out" || fail "hello.py printed no greeting"
grep -Eq "^cordon: ok \(exit 0\) .*\[(namespace|container) " "$work/err" ||
  fail "hello.py did not run in an isolating backend"

"$cordon" run --no-history "$examples/escape.py" >"$work/out" 2>"$work/err"
status=$?
[ "$status" -eq 0 ] || fail "escape.py exited $status"
attempts=$(grep -c ': stopped (' "$work/out")
[ "$attempts" -eq 5 ] || fail "expected 5 attempts stopped, saw $attempts"
if grep -q 'REACHED' "$work/out"; then fail "an attempt was not stopped"; fi
echo "quick_start_test: hello.py sandboxed, escape.py: 5 of 5 attempts stopped"
