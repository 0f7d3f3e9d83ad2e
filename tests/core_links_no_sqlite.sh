#!/bin/sh
# CTest core_does_not_link_sqlite (issue #14): the run history is the front ends' (frontend/),
# so libcordon-core and every backend plugin load without SQLite; `cordon`, which records
# runs, does load it (the positive control: the check can see a dependency when there is one).
# Usage: core_links_no_sqlite.sh <cordon binary> <libcordon-core> <plugin>...
set -eu
links_sqlite() { ldd "$1" | grep -q 'libsqlite3'; }
cli=$1
shift
if ! links_sqlite "$cli"; then
  echo "control failed: $cli does not load libsqlite3, so this check proves nothing" >&2
  exit 1
fi
status=0
for f in "$@"; do
  if links_sqlite "$f"; then
    echo "FAIL: $f loads libsqlite3:" >&2
    ldd "$f" | grep libsqlite3 >&2
    status=1
  else
    echo "ok: $f does not load libsqlite3"
  fi
done
exit $status
