#!/bin/sh
# Every kernel of Llama decode (cap 16, and cap 1024 where attention is split
# over workgroups) and prefill plans, Gemma 2 and Phi-3 decode and Qwen 3
# prefill plans (graphs traced by the families layer with tiny configs,
# stored as .pgraph), and the demo model's 16-token prefill (the tiled GEMM),
# renders for all four targets, and each
# output is validated by the target's own tool: ptxas sm_80 and sm_90,
# spirv-val, the wgpu wheel (tests/ref/wgsl_validate.py), llc-19 + ld.lld-19.
# A missing tool is a SKIP for that target; all missing → exit 77.
set -u
here=$(dirname "$0")
src=${POOT_SOURCE_DIR:-$here/../../..}
. "$here/render_validate.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ran=0
# The command's exit codes: --help 0, bad usage 2, a failure 1.
"$POOT" compile --help > /dev/null 2>&1 || { echo "FAIL: compile --help"; fail=1; }
"$POOT" compile --target ptx > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL: usage exit"; fail=1; }
"$POOT" compile -g "$tmp/missing.pgraph" --target ptx > /dev/null 2>&1
[ $? -eq 1 ] || { echo "FAIL: failure exit"; fail=1; }
# The demo model's 16-token prefill: its projections take the tiled GEMM.
for g in "$here"/plan_llama_decode.pgraph "$here"/plan_llama_prefill.pgraph \
    "$here"/plan_llama_decode_cap1024.pgraph "$here"/plan_gemma2_decode.pgraph \
    "$here"/plan_qwen3_prefill.pgraph "$here"/plan_phi3_decode.pgraph \
    "$src/models/poot-demo.gguf"; do
  case $g in
    *.gguf) base=demo_prefill16; input="-m $g --step prefill:16 --cap 64" ;;
    *) base=$(basename "$g" .pgraph); input="-g $g" ;;
  esac
  for t in ptx ptx90 glsl wgsl amdgpu; do
    d="$tmp/$base-$t"
    # shellcheck disable=SC2086 # $input is two or four words
    if ! "$POOT" compile $input --target "$t" --emit "$d" > "$d.log" 2>&1; then
      echo "FAIL: poot compile $base $t: $(cat "$d.log")"
      fail=1
      continue
    fi
    validate_rendered "$t" "$d"
  done
done
[ $fail -ne 0 ] && exit 1
[ $ran -eq 0 ] && { echo "SKIP: no validation tool found"; exit 77; }
echo "all renderings validated"
exit 0
