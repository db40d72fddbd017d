#!/usr/bin/env bash
# Decode/prefill figures of docs/PERFORMANCE.md on an NVIDIA GPU (PTX backend):
# the demo model, stories260K, and random-weight models of real shapes
# (bench/synthetic_llama.py) at f16/q8_0/q4_0. JSON per run lands in $OUT.
set +e
: "${OUT:=/tmp/poot-bench-out}"; mkdir -p "$OUT"; LLAMA3_TOK=${LLAMA3_TOK:?folder with the Llama 3 tokenizer.json}; QWEN_TOK=${QWEN_TOK:?folder with the Qwen tokenizer.json}; STORIES=${STORIES:?folder with stories260K.bin and tok512.bin}
P=${POOT:-build/tools/poot}
nvidia-smi --query-gpu=name,driver_version,clocks.max.mem --format=csv,noheader
$P --version; $P devices
b() { name=$1; shift; echo "== $name"; timeout 120 $P bench "$@" --device ptx --json > $OUT/$name.json 2> $OUT/$name.err; echo "rc=$?"; tail -c 1500 $OUT/$name.json; tail -3 $OUT/$name.err; }
b demo -m models/poot-demo.gguf -p 64 -n 128
b stories -m $STORIES/stories260K.bin --tokenizer $STORIES/tok512.bin -p 64 -n 128
python3 bench/synthetic_llama.py --shape llama-3.2-1b --tokenizer $LLAMA3_TOK --out /tmp/l1b
for t in f16 q8_0 q4_0; do timeout 100 $P convert /tmp/l1b /tmp/l1b-$t.gguf --type $t 2>&1 | tail -1; b l1b-$t -m /tmp/l1b-$t.gguf -p 512 -n 64; rm -f /tmp/l1b-$t.gguf; done
python3 bench/synthetic_llama.py --shape qwen2.5-0.5b --tokenizer $QWEN_TOK --out /tmp/q05
for t in f16 q4_0; do timeout 100 $P convert /tmp/q05 /tmp/q05-$t.gguf --type $t 2>&1 | tail -1; b q05-$t -m /tmp/q05-$t.gguf -p 512 -n 64; done
cd $OUT && tar czf all.tgz *.json *.err && ls
