#!/bin/sh
# The prefill GEMM's matrix-fragment form (gemm_mma.pgraph: 70 positions of
# an FFN at 2048 → 4096 → 2048 — f16 gate and q4_0 up sharing x under
# SwiGLU, the q4_k down projection with the residual — then bf16 and f32
# projections with N and K not whole tiles or steps) rendered for every
# target, each output validated by the target's own tool: ptxas sm_80 and
# sm_90, spirv-val, the wgpu wheel (tests/ref/wgsl_validate.py), llc-19 +
# ld.lld-19. On PTX every projection must be the gemm_mma form (split over K
# where its tiles are few: 70 rows; the rest of the dispatches are the
# splits' combines), on the other targets none — first with x and the
# weights through the emitter in 48 KiB (the forms x-emitter, w-emitter,
# static-shared), then the defaults: x and weights staged (gemm_x, gemm_w)
# in 48 KiB, then in the opt-in amount. A missing tool is a SKIP for that
# target; all missing → exit 77.
set -u
here=$(dirname "$0")
src=${POOT_SOURCE_DIR:-$here/../../..}
. "$here/render_validate.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ran=0
for t in ptx ptx90 glsl wgsl amdgpu; do
  d="$tmp/$t"
  if ! "$POOT" compile -g "$here/gemm_mma.pgraph" --target "$t" --emit "$d" \
    --forms x-emitter,w-emitter,static-shared > "$d.log" 2>&1; then
    echo "FAIL: poot compile $t: $(cat "$d.log")"
    fail=1
    continue
  fi
  n=$(grep -c '^dispatch ' "$d/plan.txt")
  m=$(grep -c '^dispatch .* gemm_mma\( split\)\{0,1\}\( raw\)\{0,1\}\( xs\)\{0,1\}$' "$d/plan.txt")
  c=$(grep -c '^dispatch .* \(gemm_combine\|gemm_x\) ' "$d/plan.txt")
  case $t in
    ptx|ptx90) [ "$m" -eq 4 ] && [ "$n" -eq $((m + c)) ] || { echo "FAIL: $t: $m of $n dispatches are gemm_mma ($c combines)"; fail=1; } ;;
    *) [ "$m" -eq 0 ] || { echo "FAIL: $t: $m dispatches are gemm_mma"; fail=1; } ;;
  esac
  validate_rendered "$t" "$d"
done
# The staged forms (x and the weights staged once, the default: gemm_x, gemm_w
# and the raw path's " xs ws" dispatches) in 48 KiB (static-shared) at both
# precisions, for sm_90's ptxas.
for mp in high medium; do
  d="$tmp/ptx90-staged-$mp"
  if ! "$POOT" compile -g "$here/gemm_mma.pgraph" --target ptx90 --matmul-precision $mp \
    --forms static-shared --emit "$d" > "$d.log" 2>&1; then
    echo "FAIL: poot compile ptx90 staged $mp: $(cat "$d.log")"
    fail=1
    continue
  fi
  grep -q ' ws$' "$d/plan.txt" && grep -q ' gemm_w ' "$d/plan.txt" || { echo "FAIL: ptx90 staged $mp: no weights staged"; fail=1; }
  # In 48 KiB the SwiGLU pair (%11, two roots) at high takes no raw path.
  if [ $mp = high ] && grep -q '^dispatch .* %11 gemm_mma.* ws$' "$d/plan.txt"; then
    echo "FAIL: ptx90 staged high: the SwiGLU pair's staged weights fit 48 KiB (see below)"; fail=1
  fi
  validate_rendered ptx90 "$d"
done
# The same with the opt-in amount (the default, 227 KiB on sm_90): at high the
# SwiGLU pair's rings of staged weights (hi and lo) fit and it takes the raw
# path (" ws"); kernels over 48 KiB declare the dynamic window (.extern
# dshared), the rest their static arrays; ptxas sm_90 takes every kernel.
for mp in high medium; do
  d="$tmp/ptx90-big-$mp"
  if ! "$POOT" compile -g "$here/gemm_mma.pgraph" --target ptx90 --matmul-precision $mp \
    --emit "$d" > "$d.log" 2>&1; then
    echo "FAIL: poot compile ptx90 opt-in shared $mp: $(cat "$d.log")"
    fail=1
    continue
  fi
  grep -q '^dispatch .* %11 gemm_mma split raw.* xs ws$' "$d/plan.txt" || { echo "FAIL: ptx90 opt-in shared $mp: the SwiGLU pair (%11) is not raw with staged weights"; fail=1; }
  dyn=$(grep -l '^\.extern \.shared \.align 16 \.b8 dshared\[\];$' "$d"/*.ptx | wc -l)
  [ "$dyn" -ge 2 ] || { echo "FAIL: ptx90 opt-in shared $mp: $dyn kernels with a dynamic window"; fail=1; }
  validate_rendered ptx90 "$d"
done
[ $fail -ne 0 ] && exit 1
[ $ran -eq 0 ] && { echo "SKIP: no validation tool found"; exit 77; }
echo "all renderings validated"
exit 0
