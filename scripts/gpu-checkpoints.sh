#!/usr/bin/env bash
# scripts/gpu-checkpoints.sh — on a GPU machine with torch and transformers,
# from a checkout prepared by scripts/gpu-pack.sh: makes the transformers
# checkpoint references (scripts/reference/hf_checkpoints.py, with llama.cpp's
# converter from LLAMA_CPP_SRC, an unpacked llama.cpp source tree), then runs
# tests/unit/llm/verify_hf_checkpoints.py on every route on the oracle and on
# PTX, the llama-cpp route over llama.cpp's own files. Logs and the new
# references land in $OUT (default /tmp/poot-gpu-out) as checkpoints.tgz.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/poot-gpu-out}
WORK=${WORK:-/tmp/poot-ckpt}
SRC=${LLAMA_CPP_SRC:?set LLAMA_CPP_SRC to an unpacked llama.cpp source tree}
mkdir -p "$OUT" "$WORK/results"
export LD_LIBRARY_PATH=$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export POOT=$PWD/.gpu/bin/poot POOT_DATA_DIR=$PWD/.gpu/data POOT_SOURCE_DIR=$PWD PYTHONUNBUFFERED=1
export PYTHONPATH=$SRC/gguf-py${PYTHONPATH:+:$PYTHONPATH}
R=$WORK/results
python3 scripts/reference/hf_checkpoints.py "$WORK/models" --out tests/data/hf-checkpoints \
  --llama-cpp "$SRC" >"$R/references.log" 2>&1
echo "references: exit $?"
# The six runs at once (the oracle runs on the CPU cores, PTX shares the GPU).
for dev in eval ptx; do
  for route in safetensors gguf llama-cpp; do
    extra=""
    [ "$route" = llama-cpp ] && extra="--llama-cpp-dir $WORK/models"
    (timeout 900 python3 tests/unit/llm/verify_hf_checkpoints.py --route $route --device $dev \
      $extra >"$R/$route-$dev.log" 2>&1; echo "$route on $dev: exit $? — $(tail -n 1 "$R/$route-$dev.log")") &
  done
done
wait
cp -r tests/data/hf-checkpoints "$R/"
tar czf "$OUT/checkpoints.tgz" -C "$WORK" results
