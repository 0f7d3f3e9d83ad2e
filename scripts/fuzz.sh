#!/usr/bin/env bash
# Builds the fuzz preset (clang-19, libFuzzer, ASan+UBSan) and runs every fuzz target —
# or the ones named — for SECONDS each, a few at a time at the lowest priority. Part of
# the full tier (scripts/test.sh --full); docs/FUZZING.md says more.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. scripts/fuzz.sh 600 units history_db
#
# Environment: FUZZ_JOBS targets at once (default 2); FUZZ_MERGE=1 merges what each run
# found into its seed corpus tests/fuzz/corpus/<target>/ (minimised: only inputs that add
# coverage edges), to commit. Each target's log is build/fuzz/fuzz-logs/<target>.log and a crash
# lands in build/fuzz/fuzz-crashes/. Exits non-zero when any target found a crash.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
jobs="${FUZZ_JOBS:-2}"

scripts/install-deps.sh --fuzz
if [[ ! -f build/fuzz/CMakeCache.txt ]]; then
  cmake --preset fuzz >/dev/null
fi

targets=("$@")
if ((${#targets[@]} == 0)); then
  for source in tests/fuzz/*_fuzz.cpp; do
    name="$(basename "$source" .cpp)"
    targets+=("${name%_fuzz}")
  done
fi
build_targets=()
for t in "${targets[@]}"; do build_targets+=("${t}_fuzz"); done
nice cmake --build build/fuzz --target "${build_targets[@]}" -j"$(nproc)"

bin=build/fuzz/tests/fuzz
logs=build/fuzz/fuzz-logs
crashes=build/fuzz/fuzz-crashes
mkdir -p "$logs" "$crashes"

# One target: fuzz into a scratch corpus in the build tree (seeded by the committed one),
# then, with FUZZ_MERGE=1, merge the scratch corpus back into the committed one.
run_one() {
  local t="$1" scratch="$bin/corpus-$1"
  mkdir -p "$scratch"
  local rc=0
  nice -n 19 "$bin/${t}_fuzz" "$scratch" "tests/fuzz/corpus/$t" -max_total_time="$seconds" \
    -timeout=30 -print_final_stats=1 -artifact_prefix="$crashes/$t-" >"$logs/$t.log" 2>&1 ||
    rc=$?
  if ((rc == 0)) && [[ "${FUZZ_MERGE:-0}" == 1 ]]; then
    # -use_counters=0: an input is kept for a new edge, not for a new hit count of one (a
    # corpus a third the size, the same edges).
    nice -n 19 "$bin/${t}_fuzz" -merge=1 -use_counters=0 "tests/fuzz/corpus/$t" "$scratch" \
      >>"$logs/$t.log" 2>&1 ||
      rc=$?
  fi
  return "$rc"
}

# The final stats of a log: "Done N runs in S second(s)" and the last cov/ft/corp line.
summary() {
  local log="$1" done_line stats_line
  done_line="$(grep -E '^Done [0-9]+ runs' "$log" | tail -1 || true)"
  stats_line="$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE).*cov:' "$log" | tail -1 || true)"
  echo "${done_line:-no Done line} | ${stats_line:-no stats}"
}

failed=()
pids=()
names=()
wait_one() {
  local pid="${pids[0]}" name="${names[0]}"
  pids=("${pids[@]:1}")
  names=("${names[@]:1}")
  if wait "$pid"; then
    echo "fuzz $name: $(summary "$logs/$name.log")"
  else
    echo "fuzz $name: FAILED (see $logs/$name.log, $crashes/)"
    failed+=("$name")
  fi
}
for t in "${targets[@]}"; do
  ((${#pids[@]} >= jobs)) && wait_one
  run_one "$t" &
  pids+=($!)
  names+=("$t")
done
while ((${#pids[@]} > 0)); do wait_one; done

if ((${#failed[@]} > 0)); then
  echo "fuzz: crashes in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${seconds} s each, no crash"
