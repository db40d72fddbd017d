#!/bin/sh
# `poot devices`: text and --json list every backend with a reason when
# absent; --help exits 0; a bad flag exits 2.
set -u
out=$("$POOT" devices) || { echo "poot devices failed"; exit 1; }
for b in ptx rocm vulkan wgpu npu; do
  echo "$out" | grep -q "^$b " || { echo "no line for $b in: $out"; exit 1; }
done
json=$("$POOT" devices --json) || { echo "poot devices --json failed"; exit 1; }
printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
names = [b["name"] for b in d["backends"]]
assert names == ["ptx", "rocm", "vulkan", "wgpu", "npu"], names
for b in d["backends"]:
    assert b["present"] or b["reason"], b
    for dev in b["devices"]:
        assert dev["usable"] or dev["why"], dev
' || { echo "bad JSON: $json"; exit 1; }
"$POOT" devices --help > /dev/null || { echo "--help did not exit 0"; exit 1; }
"$POOT" devices --bogus > /dev/null 2>&1
[ $? -eq 2 ] || { echo "a bad flag did not exit 2"; exit 1; }
echo "$out"
