#!/usr/bin/env bash
# scripts/gpu-check.sh — builds poot's PTX device and its GPU tests (Release,
# out of tree), runs them on this machine's NVIDIA GPU, and prints a summary:
#   ptx_device           buffers, slot-driven graph replay, replay vs eager
#                        bit-identity, copies, device time, launch benchmark
#   ptx_device_fault     a failed check -> KERNEL_FAULT -> POISONED, recovery
#   ptx_device_timeout   a never-ending kernel, 2 s timeout -> TIMEOUT -> POISONED
#   kir_render_ptx_cuda  the KIR corpus rendered to PTX, run against its C reference
#   exec_conformance_ptx the engine's conformance suite on PTX (CMake builds only)
#
# Usage: scripts/gpu-check.sh [BUILD_DIR]   (default: a fresh folder under /tmp)
# Environment: CUDA_HOME (where include/cuda.h is; default /usr/local/cuda),
# POOT_GPU_CHECK_LOGS (a folder that receives every test's full log),
# POOT_GPU_CHECK_BUILD (cmake or direct, to force one way of building).
#
# With CMake, pkg-config, cmocka and pcre2 present it builds with CMake; on a
# GPU machine that has only a C compiler and the driver (no -dev packages)
# it compiles the few layers the tests need directly. Exit status: 0 when
# every test passed or skipped, 1 when one failed, 2 when the build failed.
set -u
cd "$(dirname "$0")/.."
src=$(pwd)
build=${1:-$(mktemp -d /tmp/poot-gpu-check.XXXXXX)}
mkdir -p "$build/logs"
logs=${POOT_GPU_CHECK_LOGS:-$build/logs}
mkdir -p "$logs"
cuda=${CUDA_HOME:-/usr/local/cuda}
jobs=$(nproc 2>/dev/null || echo 4)
cc=${CC:-cc}

echo "== poot gpu-check $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
echo "== commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/== GPU: /'
else
  echo "== GPU: nvidia-smi not found"
fi

t0=$(date +%s)
mode=${POOT_GPU_CHECK_BUILD:-}
if [ -z "$mode" ]; then
  mode=direct
  if command -v cmake >/dev/null && command -v pkg-config >/dev/null &&
  pkg-config --exists cmocka libpcre2-8 2>/dev/null; then
    mode=cmake
  fi
fi
echo "== build: $mode, Release, in $build"
extra=
if [ "$mode" = cmake ]; then
  if CUDA_HOME=$cuda cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$logs/build.log" 2>&1 &&
    cmake --build "$build" --target help 2>/dev/null | grep -q exec_conformance_ptx; then
    extra=exec_conformance_ptx # the engine's conformance suite on PTX
  fi
  if ! CUDA_HOME=$cuda cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >>"$logs/build.log" 2>&1 ||
    ! cmake --build "$build" -j "$jobs" --target ptx_device kir_render_ptx_cuda $extra >>"$logs/build.log" 2>&1; then
    tail -40 "$logs/build.log"
    echo "== BUILD FAILED"
    exit 2
  fi
  bin_ptx=$build/tests/ptx_device
  bin_corpus=$build/tests/kir_render_ptx_cuda
else
  if [ ! -f "$cuda/include/cuda.h" ]; then
    echo "== BUILD FAILED: $cuda/include/cuda.h not found (set CUDA_HOME)"
    exit 2
  fi
  obj=$build/obj
  mkdir -p "$obj"
  flags="-std=c17 -O2 -g -Wall -Wextra -D_GNU_SOURCE -fno-strict-aliasing -I$src/include"
  : >"$logs/build.log"
  compile() { # file extra-flags...
    local f=$1
    shift
    local o
    o=$obj/$(echo "${f#"$src"/}" | tr '/' '_').o
    # shellcheck disable=SC2086
    $cc $flags "$@" -c "$f" -o "$o" >>"$logs/build.log" 2>&1 || echo "$f" >>"$obj/failed"
  }
  rm -f "$obj/failed"
  n=0
  for f in "$src"/src/base/*.c "$src"/src/kir/*.c "$src"/src/exec/device.c \
    "$src"/src/devices/catalogue.c "$src"/tests/unit/kir/corpus.c \
    "$src"/tests/unit/kir/corpus_ops.c "$src"/tests/unit/kir/corpus_mma.c; do
    compile "$f" -I"$src/tests/unit/kir" &
    n=$((n + 1))
    if [ $((n % jobs)) -eq 0 ]; then wait; fi
  done
  for f in "$src"/src/devices/ptx/*.c; do
    compile "$f" -DPOOT_HAVE_CUDA_H=1 -isystem "$cuda/include" -I"$src/src/devices/ptx" &
  done
  compile "$src/tests/unit/devices/ptx_test.c" -I"$src/src/devices/ptx" &
  compile "$src/tests/unit/kir/render_ptx_cuda_test.c" -I"$src/tests/unit/kir" &
  wait
  if [ -f "$obj/failed" ]; then
    tail -40 "$logs/build.log"
    echo "== BUILD FAILED: $(tr '\n' ' ' <"$obj/failed")"
    exit 2
  fi
  lib=$(ls "$obj"/src_*.o | grep -v '_devices_ptx_')
  ptxlib=$(ls "$obj"/src_devices_ptx_*.o)
  corpus=$(ls "$obj"/tests_unit_kir_corpus*.o)
  bin_ptx=$build/ptx_device
  bin_corpus=$build/kir_render_ptx_cuda
  # shellcheck disable=SC2086
  $cc -o "$bin_ptx" "$obj/tests_unit_devices_ptx_test.c.o" $ptxlib $lib -ldl -lpthread -lm \
    >>"$logs/build.log" 2>&1 &&
    $cc -o "$bin_corpus" "$obj/tests_unit_kir_render_ptx_cuda_test.c.o" $corpus $lib -ldl -lpthread -lm \
      >>"$logs/build.log" 2>&1 || {
    tail -40 "$logs/build.log"
    echo "== BUILD FAILED (link)"
    exit 2
  }
fi
echo "== built in $(($(date +%s) - t0)) s"

failed=0
declare -a summary
run_test() { # name limit-seconds command...
  local name=$1 limit=$2
  shift 2
  local s rc
  s=$(date +%s.%N)
  timeout -k 5 "$limit" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  local secs
  secs=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  local verdict=PASS
  if [ $rc -eq 77 ]; then
    verdict=SKIP
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    verdict="FAIL (timed out after $limit s)"
    failed=1
  elif [ $rc -ne 0 ]; then
    verdict="FAIL (exit $rc)"
    failed=1
  fi
  summary+=("$(printf '%-22s %-28s %6s s' "$name" "$verdict" "$secs")")
  echo "---- $name: $verdict"
  grep -E '^(FAIL|SKIP|ok: ptx_device|ptx_device |device:|fault:|timeout:|the process|a new device|40 replays|replay \(|BENCH|sm_[0-9]+ on|the context)' \
    "$logs/$name.log" | head -60
}

run_test ptx_device 120 "$bin_ptx" basic
run_test ptx_device_fault 60 "$bin_ptx" fault
run_test ptx_device_timeout 60 "$bin_ptx" timeout
run_test kir_render_ptx_cuda 300 "$bin_corpus"
if [ -n "$extra" ]; then
  run_test exec_conformance_ptx 600 "$build/tests/exec_conformance_ptx" ptx
fi

echo "== summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(($(date +%s) - t0)) s in all)"
for line in "${summary[@]}"; do echo "$line"; done
exit $failed
