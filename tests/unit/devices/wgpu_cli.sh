#!/bin/sh
# `poot devices`, `poot generate` and `poot bench` on wgpu: the backend is
# listed with its adapter, the demo model's greedy text is the oracle's, and
# bench reports the host time spent re-encoding each step. Skips (77) when
# `poot devices` does not find wgpu present.
set -u
line=$("$POOT" devices 2>/dev/null | grep '^wgpu ')
case "$line" in
  *present*) ;;
  *) echo "SKIP: wgpu absent: $line"; exit 77 ;;
esac
"$POOT" devices 2>/dev/null | grep -q '^  wgpu:0 ' || { echo "no wgpu adapter listed"; exit 1; }
demo="$POOT_SOURCE_DIR/models/poot-demo.gguf"
out=$("$POOT" generate -m "$demo" -p "Once upon a time" -n 16 --temp 0 --device wgpu 2>/dev/null) ||
  { echo "poot generate --device wgpu failed"; exit 1; }
case "$out" in
  "Once upon a time, there was a kind boy named Jake"*) ;;
  *) echo "unexpected text: $out"; exit 1 ;;
esac
json=$("$POOT" bench -m "$demo" -p 8 -n 8 --eager-steps 2 --copy-mib 4 --device wgpu --json \
  2>/dev/null) || { echo "poot bench --device wgpu failed"; exit 1; }
printf '%s' "$json" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["backend"] == "wgpu", j["backend"]
assert j["encode_us_per_step"] > 0, j
assert j["eager_ids_equal"], j
print("wgpu: decode %.1f tok/s, host %.1f us/step, of it encoding %.1f us/step (%d dispatches)" %
      (j["decode_tok_s"], j["host_us_per_step"], j["encode_us_per_step"], j["dispatches_per_step"]))
' || { echo "bad bench JSON: $json"; exit 1; }
echo "$out"
