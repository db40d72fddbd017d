#!/bin/sh
# The GEMV template's block formats (gemv_blocks.pgraph: q4_k × q6_k sharing
# x at two rows per subgroup, q5_k at K = 4096, then q4_1, q5_0, q5_1, q8_0,
# q4_0, q6_k, q4_k at 2048 × 2048, and q4_k, q4_k, q6_k roots sharing x)
# rendered for every target, each output validated by the target's own
# tool: ptxas sm_80 and sm_90, spirv-val, the wgpu wheel
# (tests/ref/wgsl_validate.py), llc-19 + ld.lld-19. Every dispatch must be
# the gemv template (but on WebGPU, which has no subgroups). A missing tool is a SKIP for that target; all missing →
# exit 77.
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
  if ! "$POOT" compile -g "$here/gemv_blocks.pgraph" --target "$t" --emit "$d" > "$d.log" 2>&1; then
    echo "FAIL: poot compile $t: $(cat "$d.log")"
    fail=1
    continue
  fi
  n=$(grep -c '^dispatch ' "$d/plan.txt")
  g=$(grep -c '^dispatch .* gemv$' "$d/plan.txt")
  # WebGPU has no subgroup operations: the generic contraction there.
  [ "$t" = wgsl ] && g=$n
  [ "$n" -gt 0 ] && [ "$n" -eq "$g" ] || { echo "FAIL: $t: $g of $n dispatches are gemv"; fail=1; }
  validate_rendered "$t" "$d"
done
# Medium precision (x in int8 blocks, dot4_i8) where the target has the
# instruction: dp4a on PTX sm_90. (Targets that would emulate it, GLSL, WGSL
# and gfx942, keep the float form; the KIR corpus runs the emulation.)
for t in ptx90; do
  d="$tmp/$t-medium"
  if ! "$POOT" compile -g "$here/gemv_blocks.pgraph" --target "$t" --matmul-precision medium \
    --emit "$d" > "$d.log" 2>&1; then
    echo "FAIL: poot compile $t medium: $(cat "$d.log")"
    fail=1
    continue
  fi
  n=$(grep -c '^dispatch ' "$d/plan.txt")
  g=$(grep -c '^dispatch .* gemv medium$' "$d/plan.txt")
  [ "$n" -gt 0 ] && [ "$n" -eq "$g" ] || { echo "FAIL: $t medium: $g of $n dispatches are gemv medium"; fail=1; }
  grep -q 'dp4a' "$d"/k000* || { echo "FAIL: $t medium: no dp4a"; fail=1; }
  validate_rendered "$t" "$d"
done
[ $fail -ne 0 ] && exit 1
[ $ran -eq 0 ] && { echo "SKIP: no validation tool found"; exit 77; }
echo "all renderings validated"
exit 0
