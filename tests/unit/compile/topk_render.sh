#!/bin/sh
# top_k's kernels (the sorting pipeline of templates/select.c: tiles, merge
# rounds, a single tile; the rank template of short rows) and cumsum's (the
# scan of templates/scan.c, the serial template) rendered for all
# targets by `poot compile`, and each output validated by the target's own
# tool: ptxas sm_80 and sm_90, spirv-val, the wgpu wheel
# (tests/ref/wgsl_validate.py), llc-19 + ld.lld-19. A missing tool is a SKIP
# for that target; all missing → exit 77.
set -u
here=$(dirname "$0")
src=${POOT_SOURCE_DIR:-$here/../../..}
. "$here/render_validate.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ran=0
# check NAME GRAPH: every kernel of the graph's plan, for every target,
# through the target's tool.
check() {
  name=$1
  g=$2
  for t in ptx ptx90 glsl wgsl amdgpu; do
    d="$tmp/$name-$t"
    if ! "$POOT" compile -g "$g" --target "$t" --emit "$d" > "$d.log" 2>&1; then
      echo "FAIL: poot compile $name $t: $(cat "$d.log")"
      fail=1
      continue
    fi
    validate_rendered "$t" "$d"
  done
}
# top_k: name dtype rows n k
while read -r name dt rows n k; do
  g="$tmp/$name.pgraph"
  printf 'pgraph 1\n%%0 = param 0 "x" : %s[%s,%s]\n%%1, %%2 = top_k %%0 {k=%s} : %s[%s,%s], i32[%s,%s]\noutput %%1\nenv "idx" = %%2\n' \
    "$dt" "$rows" "$n" "$k" "$dt" "$rows" "$k" "$rows" "$k" > "$g"
  check "$name" "$g"
done <<CASES
vocab_k1024 f32 3 128256 1024
vocab_k40 f16 1 128256 40
rows_k1000 f16 2 4097 1000
tile_k20 f32 3 100 20
rank_k5 f32 2 50 5
CASES
# cumsum (the scan, the serial template): name dtype acc rows n
while read -r name dt acc rows n; do
  g="$tmp/$name.pgraph"
  printf 'pgraph 1\n%%0 = param 0 "x" : %s[%s,%s]\n%%1 = cumsum %%0 {axis=1} : %s[%s,%s]\noutput %%1\n' \
    "$dt" "$rows" "$n" "$acc" "$rows" "$n" > "$g"
  check "$name" "$g"
done <<CASES
cumsum_vocab f32 f32 1 128256
cumsum_f16 f16 f32 3 1000
cumsum_i32 i32 i32 2 4097
cumsum_serial f32 f32 3 40
CASES
[ $fail -ne 0 ] && exit 1
[ $ran -eq 0 ] && { echo "SKIP: no validation tool found"; exit 77; }
echo "all renderings validated"
exit 0
