#!/usr/bin/env bash
# fuzz-long.sh [SECONDS] — a long fuzzing campaign over every libFuzzer
# target (the poot_add_fuzzer registrations in tests/fuzz/*.cmake).
#
#   scripts/fuzz-long.sh          # one hour per fuzzer
#   scripts/fuzz-long.sh 120      # two minutes per fuzzer
#
# Builds the fuzz build (build-fuzz, clang) when needed, then runs the
# fuzzers for SECONDS each, up to JOBS at a time (default: nproc). Each
# fuzzer works on its own copy of its corpus under
# build-fuzz/fuzz-long/<fuzzer>/corpus, which keeps every new input; when
# a run stops on a finding, the finding is kept and the fuzzer restarts for
# the time left (at most MAX_FINDINGS findings a fuzzer; a timeout whose
# input re-runs alone in under a second of CPU time is the machine's load,
# kept as load-timeout-* and not counted). At the end the
# new inputs that add edges are merged into tests/fuzz/corpus/<dir>
# (libFuzzer -merge=1 -use_counters=0: the committed seeds stay, inputs that
# add no edge are left out; MERGE=0 skips this; check the size before
# committing what it adds), and a table gives each fuzzer's
# executions, coverage (edges, libFuzzer's "cov"), the inputs merged and
# its findings. Findings (crash-*, leak-*, timeout-*, oom-*) stay in
# build-fuzz/fuzz-long/<fuzzer>/; the logs are beside them.
#
# Environment: JOBS, MAX_FINDINGS (3), MERGE (1), FUZZ_BUILD (build-fuzz),
# FUZZ_CC (clang-19, else clang), ONLY (a regex of fuzzer names to run),
# SKIP_BUILD=1 (use the fuzzers as built).
set -euo pipefail

SECONDS_EACH=${1:-3600}
case $SECONDS_EACH in '' | *[!0-9]*)
  echo "usage: $0 [SECONDS]" >&2
  exit 2
  ;;
esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${FUZZ_BUILD:-$ROOT/build-fuzz}
JOBS=${JOBS:-$(nproc)}
MAX_FINDINGS=${MAX_FINDINGS:-3}
MERGE=${MERGE:-1}
ONLY=${ONLY:-.}
CC_FUZZ=${FUZZ_CC:-$(command -v clang-19 || command -v clang || true)}
[ -n "$CC_FUZZ" ] || {
  echo "fuzz-long: no clang found (set FUZZ_CC)" >&2
  exit 1
}

# name<TAB>corpus folder, from the registrations.
list_fuzzers() {
  cat "$ROOT"/tests/fuzz/*.cmake | tr '\n' ' ' | grep -o 'poot_add_fuzzer([^)]*)' |
    sed -E 's/poot_add_fuzzer\( *([A-Za-z0-9_]+).*CORPUS +[^ ]*\/corpus\/([A-Za-z0-9_.-]+).*/\1\t\2/' |
    grep -E "^($ONLY)" || true
}
mapfile -t FUZZERS < <(list_fuzzers)
[ ${#FUZZERS[@]} -gt 0 ] || {
  echo "fuzz-long: no fuzzer matches '$ONLY'" >&2
  exit 1
}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "fuzz-long: building $BUILD" >&2
  if [ ! -f "$BUILD/Makefile" ] && [ ! -f "$BUILD/build.ninja" ]; then # (a failed configure leaves a cache)
    CC=$CC_FUZZ cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOOT_FUZZ=ON >/dev/null
  fi
  targets=()
  for f in "${FUZZERS[@]}"; do targets+=("${f%%$'\t'*}"); done
  cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}" >/dev/null
fi

OUT=$BUILD/fuzz-long
mkdir -p "$OUT"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}

# Runs one fuzzer for SECONDS_EACH, restarting after a finding.
campaign() {
  local name=$1 dir=$2
  local bin=$BUILD/tests/$name work=$OUT/$name
  rm -rf "$work/corpus" "$work"/log-* "$work/merge.log"
  mkdir -p "$work/corpus"
  touch "$work/started"
  cp -r "$ROOT/tests/fuzz/corpus/$dir/." "$work/corpus/" 2>/dev/null || true
  local end=$(($(date +%s) + SECONDS_EACH)) run=0 findings=0
  while :; do
    local left=$((end - $(date +%s)))
    [ "$left" -gt 0 ] || break
    run=$((run + 1))
    local rc=0
    "$bin" -max_total_time="$left" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" >"$work/log-$run" 2>&1 || rc=$?
    [ "$rc" -eq 0 ] && break
    # libFuzzer's -timeout is wall time: at the lowest priority on a busy
    # machine an input that takes a tenth of a second can wait ten. A
    # timeout whose input re-runs alone in under a second of CPU time is the
    # load's, not the code's: kept as load-timeout-*, not counted.
    local last
    last=$(ls -t "$work"/timeout-* 2>/dev/null | head -1)
    if [ -n "$last" ] && grep -q "ERROR: libFuzzer: timeout" "$work/log-$run"; then
      local cpu
      cpu=$( (TIMEFORMAT='%U %S'; time timeout 60 "$bin" "$last" >/dev/null 2>&1) 2>&1 | tail -1 |
        awk '{ printf "%d", ($1 + $2) * 1000 }')
      if [ "${cpu:-99999}" -lt 1000 ]; then
        mv "$last" "$work/load-$(basename "$last")"
        echo "fuzz-long: $name: $(basename "$last") re-ran in ${cpu} ms of CPU: the load's, not counted" >&2
        continue
      fi
    fi
    findings=$((findings + 1))
    [ "$findings" -lt "$MAX_FINDINGS" ] || break
  done
  echo "$run" >"$work/runs"
}

echo "fuzz-long: ${#FUZZERS[@]} fuzzers, ${SECONDS_EACH}s each, $JOBS at a time" >&2
for f in "${FUZZERS[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  name=${f%%$'\t'*}
  dir=${f#*$'\t'}
  echo "fuzz-long: $name" >&2
  campaign "$name" "$dir" &
done
wait

printf '%-22s %12s %8s %8s %s\n' fuzzer executions edges merged findings
for f in "${FUZZERS[@]}"; do
  name=${f%%$'\t'*}
  dir=${f#*$'\t'}
  work=$OUT/$name
  execs=0
  for log in "$work"/log-*; do
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    # A run that stopped on a finding prints no stats; its last status line counts.
    [ -n "$n" ] || n=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    execs=$((execs + ${n:-0}))
  done
  edges=$(cat "$work"/log-* | grep -oE ' cov: [0-9]+' | awk '{ if ($2 > m) m = $2 } END { print m + 0 }')
  merged=-
  if [ "$MERGE" = 1 ]; then
    mkdir -p "$ROOT/tests/fuzz/corpus/$dir"
    # Edges only (-use_counters=0): hit-count buckets would keep thousands
    # of near-duplicates.
    "$BUILD/tests/$name" -merge=1 -use_counters=0 -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
      -artifact_prefix="$work/merge-" "$ROOT/tests/fuzz/corpus/$dir" "$work/corpus" \
      >"$work/merge.log" 2>&1 || true
    merged=$(sed -nE 's/.*MERGE-OUTER: ([0-9]+) new files.*/\1/p' "$work/merge.log" | tail -1)
    merged=${merged:-?}
  fi
  # Findings of this campaign (earlier ones stay in the folder, unlisted).
  mapfile -t found < <(find "$work" -maxdepth 1 -type f -newer "$work/started" \( -name 'crash-*' \
    -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
  printf '%-22s %12s %8s %8s %s\n' "$name" "$execs" "$edges" "$merged" "${#found[@]}"
  for x in "${found[@]}"; do echo "    $x"; done
done
