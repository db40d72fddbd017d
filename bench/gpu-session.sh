#!/usr/bin/env bash
# bench/gpu-session.sh — the PTX backend's checks and figures on an NVIDIA GPU
# in one run, from a checkout prepared by scripts/gpu-pack.sh (.gpu/ holds
# the binaries, the libraries they need and the test data).
#
#   bench/gpu-session.sh [tests] [profile] [bench] [big] [peers]   (default: all)
#
#   quick    the KIR corpus, the conformance suite, llm_batch_ptx and the sampling
#            suffix on the GPU, the demo's q4_k_m against the oracle (not by default)
#   tests    ptx_device (basic, fault, timeout), the KIR corpus on the GPU, the
#            engine's conformance suite on PTX, tier 3 (stories260K, the demo
#            model, every family's reference model) with `poot verify greedy`
#   profile  `poot bench --profile` of the 1B and 0.5B shapes (device time per
#            kind of dispatch)
#   bench    decode/prefill figures: demo, stories260K, Llama-3.2-1B shape
#            (f16, q8_0, q4_0), Qwen2.5-0.5B shape (f16, q4_0)
#   big      the Llama-3.1-8B shape (f16, q4_0)
#   peers    Hugging Face transformers on the same random-weight folders
#   sample   `poot bench --sample` (greedy, sampled, sampled under a JSON
#            grammar) of the demo model and the Llama-3.2-1B shape (not by default)
#   hfvec    scripts/hf_sampling_vectors.py with torch and transformers: the
#            committed vectors of tests/data/sampling (not by default)
#   llama    llama.cpp beside poot on the same GGUF files, in the same run: its
#            own converter's f16 file of the Llama-3.2-1B shape and the Q4_K_M,
#            Q6_K, Q8_0 and Q4_0 files its llama-quantize makes from it, tg128
#            and at depth 4000 (LLAMA_TYPES, LLAMA_SHAPES: default
#            llama-3.2-1b; llama-3.1-8b adds the 8B shape) (not by default)
#   ncu      Nsight Compute counters of the first decode kernels (not by default)
#   vulkan   the same GPU through its Vulkan driver, beside PTX: first the
#            pipeline diagnostic (each kernel's SPIR-V size and
#            vkCreateComputePipelines time, stopped after VK_DIAG_BUDGET_S,
#            default 60 s) for the demo model and the Llama-3.2-1B shape, then
#            devices_vulkan, devices_vulkan_cache, the conformance suite, tier 3,
#            `poot generate`, and `poot bench` of the demo and the 1B shape
#            cold and with the pipeline cache (f16, q4_k_m). The Vulkan loader
#            comes from POOT_VK_LOADER_DIR (put first on LD_LIBRARY_PATH); the
#            NVIDIA ICD from POOT_VK_ICD (its json, exported as
#            VK_DRIVER_FILES and VK_ICD_FILENAMES) (not by default)
#   wgpu     wgpu-native (packed into .gpu/wgpu by scripts/gpu-pack.sh, or
#            POOT_WGPU_LIBRARY) through the GPU's Vulkan driver (the loader and
#            ICD as for vulkan): devices_wgpu, the conformance suite on wgpu,
#            tier 3, `poot generate`, and `poot bench` of the Llama-3.2-1B shape
#            (f16) on wgpu beside vulkan and ptx, with wgpu's host µs per step
#            spent re-encoding its dispatch list (not by default)
#   vktest   devices_vulkan, devices_vulkan_cache, the conformance suite and tier 3
#            through the GPU's Vulkan driver (the loader as for vulkan) (not by default)
#   vk8b     two layers of the Llama-3.1-8B shape (f16, q4_k_m) through Vulkan
#            beside PTX (not by default)
#   vkab     the Llama-3.2-1B shape through Vulkan with the device's native half
#            conversions and with the exact routines, beside PTX; the profile of
#            each (not by default)
#   kq       the 8B shape's K-quant GEMVs kernel by kernel (two layers of it, KQ_TYPE,
#            default q4_k_m) under each setting of KQ_VARIANTS; NCU=1 adds
#            Nsight Compute's counters of them (not by default)
#   q8b      the full 8B shape by poot's convert --type q4_k_m: poot bench while
#            llama.cpp builds (pinned to the upper half of the cores, poot to the
#            lower), then on a quiet host, then llama-bench on the same file
#            (not by default)
#   xcheck   the staged forms' ids checks (the defaults against x-emitter and
#            static-shared on f16, w-emitter on q4_k_m), ptx_device, the KIR corpus,
#            conformance, and the 8B shape's two q4_k_m layers at pp512 under each form
#            of XC_FORMS at both precisions (not by default)
#   wcheck   the defaults' short check: ptx_device, greedy ids on the 1B q4_k_m file
#            against x-emitter,w-emitter,static-shared and static-shared, conformance, the
#            8B shape's two q4_k_m layers at pp512 and medium's profile (not by default)
#   xab      x staged once against the emitter's form (--forms x-emitter): the same greedy ids of a long
#            prompt on the GPU at both precisions; compile + capture (JIT cache off),
#            prefill and decode of the 8B shape's two q4_k_m layers for each binary of
#            XAB_BINS (LABEL=BINARY words); the 1B shape's pp512 and pp2048 (not by default)
#   dec8b    the full 8B shape's q4_k_m (poot's convert) at each of DEC8B_VARIANTS (default:
#            high, medium, medium with gemv-one-row) and llama.cpp on the same file; first
#            the 1B shape's pp512 at each of PF_VARIANTS (default: high and medium, each
#            with and without --forms x-emitter) (not by default)
#   pf8b     prefill and decode at the real shapes: the Llama-3.2-1B f16 folder at
#            pp512 and pp2048, the full 8B f16 folder at pp512, poot's q4_k_m of it
#            (pp512, tg64); llama.cpp builds meanwhile (pinned to the upper half of
#            the cores, poot to the lower) and llama-bench runs on the same q4_k_m
#            file (not by default)
#   vkcold   compile and capture through Vulkan cold and cached (demo, 1B
#            shape), kernels on every core and one after another (not by default)
#   pfab     prefill pp512/pp2048 at the 1B shape and pp512 at two layers of the
#            8B shape (f16, q4_k_m), PTX then Vulkan, and the pp2048 profile
#            (not by default)
#   embed    BERT encoders: a random model of all-MiniLM-L6-v2's shape
#            (scripts/reference/encoder_models.py minilm-shape, around the MiniLM
#            tokenizer gpu-pack.sh carries; EMBED_MODEL: a real folder) with
#            `poot embed --bench --device ptx` (128-token sentences at batch 64:
#            sentences/s; one sentence: latency), llm_encoders_ptx (the device
#            against the oracle), and sentence-transformers / transformers in f16
#            beside it on the same folder (bench/hf_embed.py) (not by default)
#   batch    llm_batch_ptx (the batched runner against the oracle, batch
#            invariance, prefix reuse, preemption) and `poot bench --batch B`
#            of the Llama-3.2-1B shape (f16; BATCH_SIZES, default 1 8 32 64)
#            beside the batch-1 driver (not by default)
#   bpeer    llama.cpp's llama-batched-bench (-npp 128 -ntg 64, -npl from
#            BATCH_SIZES) on its own f16 GGUF of the folder the batch phase
#            measures; built in the background, niced (a caller may start the
#            build first and touch PEER_DIR/build.started) (not by default)
#   sload    bench/serve_load.py against poot serve --max-seqs N on the
#            Llama-3.2-1B shape (N = SLOAD_STREAMS, default 64, streams a round,
#            about 128 prompt tokens and 64 generated each) (not by default)
#   gab      builds and settings side by side in one call (PTX): for each word
#            LABEL=BINARY[,ARG...] of GAB_VARIANTS (default new=$POOT), prefill
#            at the 1B shape (pp512, pp2048) and two layers of the 8B shape
#            (pp512, f16 and q4_k_m), and `poot bench --batch B` of the 1B
#            shape for B in GAB_BATCH (default 1 8 16 64; -p 128 -n 64, and
#            -p GAB_LONG (default 1024) at the largest B); the ARGs go to every
#            bench (e.g. --matmul-precision,medium) (not by default)
#   ab       the 1B f16 decode under each environment setting of AB_VARIANTS
#            (words VAR=VALUE; default: programmatic dependent launch on, then
#            off), twice each, interleaved; AB_ARGS replaces the bench
#            arguments (default -p 512 -n 128) (not by default)
#
# POOT_BIN names another poot binary to run in place of .gpu/bin/poot (an A/B
# of two builds in one device call).
#
# Every log and JSON result lands in $WORK/results, packed at the end into
# $OUT/results.tgz (OUT default: /tmp/poot-gpu-out), and a summary is printed.
# Models are random-weight folders of the real shapes (bench/synthetic_llama.py)
# under $WORK (default /tmp/poot-gpu-work).
set -u
cd "$(dirname "$0")/.."
WORK=${WORK:-/tmp/poot-gpu-work}
PACK=${OUT:-/tmp/poot-gpu-out}
OUT=$WORK/results
mkdir -p "$OUT" "$PACK"
export LD_LIBRARY_PATH=$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export POOT=${POOT_BIN:-$PWD/.gpu/bin/poot} POOT_DATA_DIR=$PWD/.gpu/data POOT_SOURCE_DIR=$PWD
export PYTHONUNBUFFERED=1
P=$POOT
phases=${*:-tests profile bench big peers}
has() { case " $phases " in *" $1 "*) return 0 ;; esac; return 1; }
log() { echo "== $*"; }

# llama.cpp's build takes minutes: started first, in the background.
PEER=$PWD/.gpu/peers/llama-bench.sh
if has llama; then
  export PEER_DIR=$WORK/peer-llama
  mkdir -p "$PEER_DIR"
  "$PEER" build >"$OUT/peer-build.log" 2>&1 &
elif has bpeer && [ -x "$PEER" ]; then # niced: poot measures meanwhile
  export PEER_DIR=$WORK/peer-llama
  mkdir -p "$PEER_DIR"
  # one build: a caller may have started it already (PEER_DIR/build.started)
  if [ ! -e "$PEER_DIR/build.started" ]; then
    touch "$PEER_DIR/build.started"
    nice -n 19 "$PEER" build >"$OUT/peer-build.log" 2>&1 &
  fi
fi

log "$(date -u '+%Y-%m-%d %H:%M UTC') commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.mem --format=csv,noheader
$P --version
$P devices

t() { # name, command...: runs a check, keeps its log, prints its verdict
  local name=$1
  shift
  local t0=$SECONDS
  timeout 300 "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  local v=PASS
  [ $rc -eq 77 ] && v=SKIP
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && v="FAIL($rc)"
  printf '%-28s %-8s %4ss  %s\n' "$name" "$v" $((SECONDS - t0)) "$(tail -1 "$OUT/$name.log")"
}

if has quick; then
  # The kernel checks without tier 3: the KIR corpus, the conformance suite,
  # the batched runner and the sampling suffix on the GPU, the demo model's
  # q4_k_m conversion against the oracle at both matmul precisions.
  log quick
  t kir_render_ptx_cuda .gpu/bin/kir_render_ptx_cuda
  t exec_conformance_ptx .gpu/bin/exec_conformance_ptx ptx
  t llm_batch_ptx .gpu/bin/llm_batch_vulkan ptx
  t llm_driver_sample_ptx .gpu/bin/llm_driver_sample_ptx ptx
  $P convert models/poot-demo.gguf "$WORK/demo-q4_k_m.gguf" --type q4_k_m >"$OUT/convert-q4km.log" 2>&1
  t verify_demo_q4_k_m_ptx $P verify greedy -m "$WORK/demo-q4_k_m.gguf" -p "Once upon a time" -n 32 --device ptx
  t generate_demo_q4_k_m_med_ptx $P generate -m "$WORK/demo-q4_k_m.gguf" -p "Once upon a time" -n 48 \
    --temp 0 --device ptx --matmul-precision medium
  echo "generate (medium): $(head -c 300 "$OUT/generate_demo_q4_k_m_med_ptx.log" | tr '\n' ' ')"
  grep -E "SKIP|FAIL|failed|PASSED" "$OUT/exec_conformance_ptx.log" | head -20
fi

if has tests; then
  log tests
  t ptx_device .gpu/bin/ptx_device basic
  t ptx_device_fault .gpu/bin/ptx_device fault
  t ptx_device_timeout .gpu/bin/ptx_device timeout
  t kir_render_ptx_cuda .gpu/bin/kir_render_ptx_cuda
  t exec_conformance_ptx .gpu/bin/exec_conformance_ptx ptx
  t verify_device_ptx python3 tests/unit/llm/verify_device.py --device ptx
  t llm_driver_sample_ptx .gpu/bin/llm_driver_sample_ptx ptx
  t llm_driver_suffix_ptx .gpu/bin/llm_driver_suffix_ptx ptx
  t llm_driver_encode_ptx .gpu/bin/llm_driver_encode_ptx ptx
  # poot's own K-quant mixture of the demo model, on the device against the oracle
  $P convert models/poot-demo.gguf "$WORK/demo-q4_k_m.gguf" --type q4_k_m >"$OUT/convert-q4km.log" 2>&1
  t verify_demo_q4_k_m_ptx $P verify greedy -m "$WORK/demo-q4_k_m.gguf" -p "Once upon a time" -n 32 --device ptx
  t generate_ptx $P generate -m models/poot-demo.gguf -p "Once upon a time" -n 48 --temp 0 --device ptx
  echo "generate: $(head -c 400 "$OUT/generate_ptx.log" | tr '\n' ' ')"
  grep -E "^(ok|FAIL|note|SKIP)" "$OUT/verify_device_ptx.log"
  grep -E "SKIP|FAIL|failed|PASSED" "$OUT/exec_conformance_ptx.log" | head -20
fi

synth() { # shape dir [layers]
  [ -f "$2/model.safetensors" ] && return 0
  local tok
  case $1 in qwen*) tok=qwen3 ;; *) tok=llama3 ;; esac
  python3 bench/synthetic_llama.py --shape "$1" --tokenizer "$POOT_DATA_DIR/hf-tokenizers/$tok" \
    --out "$2" --layers "${3:-0}" >/dev/null
}
quant() { # dir type → path of the GGUF (the folder itself for f16)
  if [ "$2" = f16 ]; then echo "$1"; return; fi
  local g=$1-$2.gguf
  [ -f "$g" ] || timeout 400 $P convert "$1" "$g" --type "$2" >/dev/null 2>&1
  echo "$g"
}
xs_ids() { # prefix model forms...: greedy ids of a 180-token prompt under each opt-in form
  # (a comma list) must be those without (the staged forms give the same bits)
  local pre=$1 model=$2 prompt mp f a
  shift 2
  prompt=$(python3 -c 'print(" ".join(["the quick brown fox jumps over the lazy dog"] * 20))')
  for mp in high medium; do
    for f in none "$@"; do
      timeout 120 $P generate -m "$model" -p "$prompt" -n 24 --temp 0 --ids --forms $f \
        --matmul-precision $mp --device ptx >"$OUT/$pre-gen-$f-$mp.txt" 2>"$OUT/$pre-gen-$f-$mp.err"
    done
    a=$OUT/$pre-gen-none-$mp.txt
    for f in "$@"; do
      if [ -s "$a" ] && cmp -s "$a" "$OUT/$pre-gen-$f-$mp.txt"; then
        echo "$pre $f $mp: the same ids ($(wc -w <"$a") ids)"
      else
        echo "$pre $f $mp: IDS DIFFER: $(head -c 120 "$a") | $(head -c 120 \
          "$OUT/$pre-gen-$f-$mp.txt") $(tail -1 "$OUT/$pre-gen-$f-$mp.err")"
      fi
    done
  done
}
vargs() { # a variant word: flags with commas for spaces, + for the commas of a list
  local a=${1//,/ }
  echo "${a//+/,}"
}
b() { # name, bench args...
  local name=$1
  shift
  timeout 300 $P bench "$@" --device ptx --json >"$OUT/$name.json" 2>"$OUT/$name.err"
  local rc=$?
  [ $rc -eq 0 ] || echo "$name: poot bench exited $rc: $(tail -2 "$OUT/$name.err")"
  python3 bench/gpu-summary.py "$OUT/$name.json"
}

if has profile; then
  log profile
  synth llama-3.2-1b "$WORK/l1b"
  synth qwen2.5-0.5b "$WORK/q05"
  b prof-l1b-f16 -m "$WORK/l1b" -p 512 -n 32 --eager-steps 4 --profile 4
  b prof-l1b-q4_0 -m "$(quant "$WORK/l1b" q4_0)" -p 512 -n 32 --eager-steps 4 --profile 4
  b prof-q05-f16 -m "$WORK/q05" -p 512 -n 32 --eager-steps 4 --profile 4
fi

if has ncu; then
  # Hardware counters of the decode kernels (Nsight Compute, where present).
  log ncu
  synth llama-3.2-1b "$WORK/l1b"
  # The first decode step after a 512-token prompt (NCU_SKIP kernels of the
  # prompt's step skipped), NCU_COUNT kernels.
  timeout 300 ncu --clock-control none -k "regex:${NCU_KERNELS:-poot_(attention|attn_combine|contract|batch)}" \
    --launch-skip "${NCU_SKIP:-0}" -c "${NCU_COUNT:-12}" \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    $P bench -m "$WORK/l1b" -p "${NCU_PROMPT:-0}" -n 2 --eager-steps 0 --copy-mib 0 --device ptx >"$OUT/ncu.txt" 2>&1
  grep -E "poot_|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Grid Size|Block Size" \
    "$OUT/ncu.txt" | head -150
fi

vk_env() { # the Vulkan loader and ICD, once
  [ -n "${VK_ENV_DONE:-}" ] && return 0
  VK_ENV_DONE=1
  local loader=${POOT_VK_LOADER_DIR:-}
  [ -z "$loader" ] && [ -e .gpu/vk/libvulkan.so.1 ] && ! ldconfig -p | grep -q libvulkan.so.1 &&
    loader=$PWD/.gpu/vk
  [ -n "$loader" ] && export LD_LIBRARY_PATH=$loader:$LD_LIBRARY_PATH
  if [ -n "${POOT_VK_ICD:-}" ]; then
    export VK_DRIVER_FILES=$POOT_VK_ICD VK_ICD_FILENAMES=$POOT_VK_ICD
  fi
}

vk_tests() { # the Vulkan device tests, the conformance suite, tier 3
  t devices_vulkan .gpu/bin/devices_vulkan
  t devices_vulkan_cache .gpu/bin/devices_vulkan_cache
  t exec_conformance_vulkan .gpu/bin/exec_conformance_vulkan vulkan
  t verify_device_vulkan python3 tests/unit/llm/verify_device.py --device vulkan
}
vk_tests_summary() {
  grep -E "^(ok|FAIL|note|SKIP)" "$OUT/verify_device_vulkan.log"
  grep -E "SKIP|FAIL|failed|PASSED" "$OUT/exec_conformance_vulkan.log" | head -20
  grep -E "fma_fused|pipeline cache:" "$OUT/devices_vulkan_cache.log" | head -3
}

if has vktest; then
  log vktest
  vk_env
  vk_tests
  vk_tests_summary
fi

if has wgpu; then
  # The wgpu device through the GPU's Vulkan driver, beside Vulkan and PTX.
  log wgpu
  vk_env
  export POOT_WGPU_LIBRARY=${POOT_WGPU_LIBRARY:-$PWD/.gpu/wgpu/libwgpu_native.so}
  $P -v devices 2>&1 | grep -i -E "^wgpu|wgpu:" | head -4
  t devices_wgpu .gpu/bin/devices_wgpu
  t exec_conformance_wgpu .gpu/bin/exec_conformance_wgpu wgpu
  t verify_device_wgpu python3 tests/unit/llm/verify_device.py --device wgpu
  grep -E "^(ok|FAIL|note|SKIP|XFAIL|XPASS)" "$OUT/verify_device_wgpu.log"
  grep -E "SKIP|FAIL|failed|PASSED|catalogue on|fault:" "$OUT/exec_conformance_wgpu.log" | head -20
  grep -E "FAILED|PASSED|device loss|device:" "$OUT/devices_wgpu.log" | head -8
  t generate_wgpu $P generate -m models/poot-demo.gguf -p "Once upon a time" -n 48 --temp 0 --device wgpu
  echo "generate: $(head -c 400 "$OUT/generate_wgpu.log" | tr '\n' ' ')"
  synth llama-3.2-1b "$WORK/l1b"
  for d in wgpu vulkan ptx; do
    timeout 300 $P bench -m "$WORK/l1b" -p 512 -n 64 --device $d --json >"$OUT/wgpu-l1b-$d.json" \
      2>"$OUT/wgpu-l1b-$d.err"
    echo "wgpu-l1b-$d: exit $? $(tail -1 "$OUT/wgpu-l1b-$d.err")"
    python3 bench/gpu-summary.py "$OUT/wgpu-l1b-$d.json"
  done
  python3 - "$OUT/wgpu-l1b-wgpu.json" <<'EOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    sys.exit("wgpu bench: no JSON (%s)" % e)
print("wgpu 1B f16: decode %.1f tok/s, host %.1f us/step, of it encoding %.1f us/step, %.0f dispatches"
      % (j["decode_tok_s"], j["host_us_per_step"], j.get("encode_us_per_step", 0),
         j["dispatches_per_step"]))
EOF
fi

if has vkab; then
  # Vulkan beside PTX on the Llama-3.2-1B shape under each setting of
  # VKAB_VARIANTS (default: as the device's probes decide, then without the
  # fence poll, then with the exact half routines), the profile of each
  # device of VKAB_PROFILE, and the Q4_K_M file of it on both.
  log vkab
  vk_env
  $P -v devices 2>&1 | grep -i -E "vulkan|half|fma" | head -8
  export POOT_VULKAN_CACHE_DIR=$WORK/vk-cache
  synth llama-3.2-1b "$WORK/l1b"
  for v in ${VKAB_VARIANTS:-default POOT_VULKAN_SPIN_US=0 POOT_VULKAN_EXACT_F16=1}; do
    n=$(echo "$v" | tr '=' '_' | tr -cd 'A-Za-z0-9_' | sed 's/POOT_VULKAN_//g')
    (export $v; timeout 300 $P bench -m "$WORK/l1b" -p 512 -n 64 --device vulkan \
      --json >"$OUT/vkab-l1b-$n.json" 2>"$OUT/vkab-l1b-$n.err")
    echo "vkab-l1b ($v): exit $?"; python3 bench/gpu-summary.py "$OUT/vkab-l1b-$n.json"
  done
  b vkab-l1b-ptx -m "$WORK/l1b" -p 512 -n 64
  for d in ${VKAB_PROFILE:-vulkan ptx}; do
    timeout 300 $P bench -m "$WORK/l1b" -p 512 -n 8 --eager-steps 4 --profile 4 --copy-mib 0 \
      --device $d >"$OUT/vkab-prof-$d.txt" 2>&1
    echo "-- profile $d"; grep -v -E '^\s*$' "$OUT/vkab-prof-$d.txt" | tail -40
  done
  m=$(quant "$WORK/l1b" q4_k_m)
  if [ -n "${VKAB_STATS:-}" ]; then
    # The driver's statistics of each kernel (the diagnostic, fresh pipelines).
    for f in "$WORK/l1b" "$m"; do
      POOT_VULKAN_DIAG=1 POOT_VULKAN_CACHE=0 timeout 200 $P generate -m "$f" -p "Once upon a time" \
        -n 2 --temp 0 --device vulkan 2>&1 | grep -E "statistics" | sed 's/^poot: warning: vulkan: //' |
        sort -u | head -40
    done
  fi
  if [ -n "${VKAB_Q4_PROFILE:-}" ]; then
    for d in $VKAB_Q4_PROFILE; do
      timeout 300 $P bench -m "$m" -p 0 -n 8 --eager-steps 4 --profile 4 --copy-mib 0 \
        --device $d >"$OUT/vkab-q4prof-$d.txt" 2>&1
      echo "-- q4_k_m profile $d"; grep -E 'µs' "$OUT/vkab-q4prof-$d.txt" | head -12
    done
  fi
  timeout 300 $P bench -m "$m" -p 512 -n 64 --device vulkan --json >"$OUT/vkab-q4km-vk.json" \
    2>"$OUT/vkab-q4km-vk.err"
  python3 bench/gpu-summary.py "$OUT/vkab-q4km-vk.json"
  b vkab-q4km-ptx -m "$m" -p 512 -n 64
fi

if has vk8b; then
  # The Llama-3.1-8B shape's kernels through Vulkan beside PTX: two layers of
  # it (every kernel of the real shape, the full vocabulary), f16 and q4_k_m.
  log vk8b
  vk_env
  synth llama-3.1-8b "$WORK/l8b2" 2
  for q in f16 q4_k_m; do
    m=$(quant "$WORK/l8b2" $q)
    timeout 300 $P bench -m "$m" -p 512 -n 64 --device vulkan --json >"$OUT/vk8b-$q-vk.json" \
      2>"$OUT/vk8b-$q-vk.err"
    python3 bench/gpu-summary.py "$OUT/vk8b-$q-vk.json"
    b "vk8b-$q-ptx" -m "$m" -p 512 -n 64
  done
fi

if has vulkan; then
  log vulkan
  vk_env
  $P devices
  export POOT_VULKAN_CACHE_DIR=$WORK/vk-cache
  rm -rf "$POOT_VULKAN_CACHE_DIR"
  synth llama-3.2-1b "$WORK/l1b"
  # The diagnostic first: one line per kernel, bounded twice (budget, timeout).
  for m in demo l1b; do
    case $m in demo) f=models/poot-demo.gguf ;; *) f=$WORK/l1b ;; esac
    POOT_VULKAN_DIAG=1 POOT_VULKAN_DIAG_BUDGET_S=${VK_DIAG_BUDGET_S:-60} POOT_VULKAN_CACHE=0 \
      timeout $((${VK_DIAG_BUDGET_S:-60} + 60)) $P -v generate -m "$f" -p "Once upon a time" -n 4 \
      --temp 0 --device vulkan >"$OUT/vk-diag-$m.log" 2>&1
    echo "vk-diag-$m: exit $? ($(grep -c 'vkCreateComputePipelines' "$OUT/vk-diag-$m.log") kernels)"
    grep -E "fma\(\)|diagnostic|still compiling|done in" "$OUT/vk-diag-$m.log" | head -4
    grep 'vkCreateComputePipelines' "$OUT/vk-diag-$m.log" |
      sort -t' ' -k14 -g -r | head -5 | cut -c1-200
  done
  vk_tests
  for run in cold cached; do
    t "generate_vulkan_$run" $P -v generate -m models/poot-demo.gguf -p "Once upon a time" -n 48 \
      --temp 0 --device vulkan
    grep -E "compiling for|pipeline cache" "$OUT/generate_vulkan_$run.log" | head -2
  done
  vk_tests_summary
  bv() { # name, bench args...: poot bench through Vulkan, then through PTX
    local name=$1
    shift
    timeout 300 $P -v bench "$@" --device vulkan --json >"$OUT/$name-vk.json" 2>"$OUT/$name-vk.err"
    echo "$name-vk: exit $? $(grep -E 'engine: plan' "$OUT/$name-vk.err" | tail -1)"
    python3 bench/gpu-summary.py "$OUT/$name-vk.json"
    b "$name-ptx" "$@"
  }
  bv vk-demo -m models/poot-demo.gguf -p 64 -n 128
  for q in f16 q4_k_m; do
    for run in cold cached; do
      [ $run = cold ] && rm -rf "$POOT_VULKAN_CACHE_DIR"
      bv "vk-l1b-$q-$run" -m "$(quant "$WORK/l1b" $q)" -p 512 -n 64
    done
  done
fi

if has vkcold; then
  # Compile and capture through Vulkan, cold (a fresh pipeline cache, NVIDIA's
  # own shader cache off) and cached, for the demo model and the Llama-3.2-1B
  # shape, with a plan's kernels built on every core and one after another
  # (POOT_VULKAN_COMPILE_THREADS=1).
  log vkcold
  vk_env
  synth llama-3.2-1b "$WORK/l1b"
  for m in demo l1b; do
    case $m in demo) f=models/poot-demo.gguf ;; *) f=$WORK/l1b ;; esac
    for th in 0 1; do
      export POOT_VULKAN_CACHE_DIR=$WORK/vk-cold-$m-$th
      rm -rf "$POOT_VULKAN_CACHE_DIR"
      for run in cold cached; do
        POOT_VULKAN_COMPILE_THREADS=$th __GL_SHADER_DISK_CACHE=0 timeout 300 $P -v bench -m "$f" \
          -p 16 -n 8 --eager-steps 0 --copy-mib 0 --device vulkan >"$OUT/vkcold-$m-$th-$run.txt" 2>&1
        echo "vkcold $m threads=$th $run: $(grep -E 'compile\+capture' "$OUT/vkcold-$m-$th-$run.txt")"
      done
    done
  done
  unset POOT_VULKAN_CACHE_DIR
fi

if has pfab; then
  # Prefill at the 1B shape (pp512, pp2048) and two layers of the 8B shape
  # (pp512, f16 and q4_k_m), PTX then Vulkan, with each chunk's profile.
  log pfab
  vk_env
  synth llama-3.2-1b "$WORK/l1b"
  synth llama-3.1-8b "$WORK/l8b2" 2
  for dev in ptx vulkan; do
    for c in "l1b f16 512" "l1b f16 2048" "l8b2 f16 512" "l8b2 q4_k_m 512"; do
      set -- $c
      m=$(quant "$WORK/$1" $2)
      n=pfab-$dev-$1-$2-pp$3
      timeout 300 $P bench -m "$m" -p "$3" -n 16 --device $dev --copy-mib 0 --json >"$OUT/$n.json" \
        2>"$OUT/$n.err"
      python3 bench/gpu-summary.py "$OUT/$n.json"
    done
  done
  timeout 300 $P bench -m "$WORK/l1b" -p 2048 -n 1 --eager-steps 1 --profile 1 --copy-mib 0 \
    --device ptx >"$OUT/pfab-profile-l1b-pp2048.txt" 2>&1
  grep -E "attention|gemm|contract|total" "$OUT/pfab-profile-l1b-pp2048.txt" | head -12
fi

if has gab; then
  log "gab: ${GAB_VARIANTS:-new=$P}"
  synth llama-3.2-1b "$WORK/l1b"
  synth llama-3.1-8b "$WORK/l8b2" 2
  for v in ${GAB_VARIANTS:-"new=$P"}; do
    label=${v%%=*}
    rest=${v#*=}
    bin=${rest%%,*}
    args=
    [ "$rest" != "$bin" ] && args=$(echo "${rest#*,}" | tr ',' ' ')
    for c in "l1b f16 512" "l1b f16 2048" "l8b2 f16 512" "l8b2 q4_k_m 512"; do
      set -- $c
      m=$(quant "$WORK/$1" $2)
      n=gab-$label-$1-$2-pp$3
      timeout 300 "$bin" bench -m "$m" -p "$3" -n 16 --device ptx --copy-mib 0 --json $args \
        >"$OUT/$n.json" 2>"$OUT/$n.err"
      python3 bench/gpu-summary.py "$OUT/$n.json"
    done
    bs=(${GAB_BATCH:-1 8 16 64})
    for B in "${bs[@]}" "long${bs[-1]}"; do
      p=128
      case $B in long*) B=${B#long} p=${GAB_LONG:-1024} ;; esac
      n=gab-$label-batch$B-p$p
      timeout 300 "$bin" bench -m "$WORK/l1b" -p $p -n 64 --batch "$B" --device ptx --copy-mib 0 \
        --json $args >"$OUT/$n.json" 2>"$OUT/$n.err"
      echo "$n: exit $? $(python3 -c 'import json,sys; j=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print("%.1f tok/s %.3f ms/step" % (j["tok_s"], j["ms_per_step"]))' "$OUT/$n.json" 2>/dev/null || tail -2 "$OUT/$n.err")"
    done
  done
fi

if has kq; then
  # The GEMVs of the 8B shape's K-quant mixture, kernel by kernel: two layers
  # of it (every kernel of the real shape), profiled under each setting of
  # KQ_VARIANTS, twice each, interleaved; NCU=1 adds the counters.
  log "kq: ${KQ_VARIANTS:-X=1}"
  synth llama-3.1-8b "$WORK/l8b2" 2
  m=$(quant "$WORK/l8b2" ${KQ_TYPE:-q4_k_m})
  for i in 1 2; do
    for v in ${KQ_VARIANTS:-"X=1"}; do
      n=$(echo "$v" | tr '=' '_' | tr -cd 'A-Z0-9_' | sed 's/POOT_//g' | head -c 40)
      (export $v; timeout 300 $P bench -m "$m" -p 0 -n 16 --eager-steps 4 --profile 8 --device ptx \
        >"$OUT/kq-$n-$i.txt" 2>&1)
      echo "-- $v ($i)"; grep -E "tok/s|profile|gemv|contract" "$OUT/kq-$n-$i.txt" | head -24
    done
  done
  if [ "${NCU:-0}" = 1 ]; then
    timeout 300 ncu --clock-control none -k "regex:poot_contract" -c "${NCU_COUNT:-12}" \
      --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
      --section MemoryWorkloadAnalysis $P bench -m "$m" -p 0 -n 2 --eager-steps 0 --copy-mib 0 \
      --device ptx >"$OUT/ncu-kq.txt" 2>&1
    grep -E "poot_|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Grid Size|Issue Slots|Eligible|Theoretical Occ|Block Limit" \
      "$OUT/ncu-kq.txt" | head -200
  fi
fi

if has q8b; then
  # The host side of a step: the bench's host - device gap while a build loads
  # the CPUs (the peer's, pinned away from poot) and on a quiet host.
  log q8b
  half=$(($(nproc) / 2))
  export PEER_DIR=$WORK/peer-llama
  mkdir -p "$PEER_DIR"
  taskset -c "$half-$(($(nproc) - 1))" nice -n 19 "$PEER" build >"$OUT/peer-build.log" 2>&1 &
  synth llama-3.1-8b "$WORK/l8b"
  m=$(quant "$WORK/l8b" q4_k_m)
  for when in build quiet; do
    [ $when = quiet ] && { "$PEER" wait || echo "llama.cpp build failed"; }
    for i in 1 2; do
      probe=(--copy-mib 0)
      [ $when-$i = quiet-1 ] && probe=()
      taskset -c "0-$((half - 1))" $P bench -m "$m" -p 512 -n 64 --eager-steps 2 --device ptx \
        "${probe[@]}" >"$OUT/q8b-$when-$i.txt" 2>&1
      echo "-- $when ($i)"; grep -E "prefill |decode |per step" "$OUT/q8b-$when-$i.txt"
    done
  done
  timeout 600 "$PEER" bench "$m" -- -p 512 -n 64 -fa 1 -r 3 -o md 2>&1 | tee "$OUT/llama-q8b.md" |
    grep -E "^\|"
fi

if has xcheck; then
  # The staged forms' check for a call with little device time: the ids checks (x staged
  # on the 1B shape's f16 folder, the weights staged on its q4_k_m file), the KIR corpus and
  # the conformance suite, and the 8B shape's two q4_k_m layers at pp512 under each form
  # of XC_FORMS at both precisions.
  log xcheck
  synth llama-3.2-1b "$WORK/l1b"
  t ptx_device .gpu/bin/ptx_device basic
  grep -E "FAIL|PASSED|big_shared" "$OUT/ptx_device.log" | head -5
  xs_ids xc "$WORK/l1b" x-emitter static-shared
  xs_ids xq "$(quant "$WORK/l1b" q4_k_m)" w-emitter x-emitter,w-emitter static-shared
  t exec_conformance_ptx .gpu/bin/exec_conformance_ptx ptx
  grep -E "FAIL|failed|PASSED" "$OUT/exec_conformance_ptx.log" | head -5
  t kir_render_ptx_cuda .gpu/bin/kir_render_ptx_cuda
  synth llama-3.1-8b "$WORK/l8b2" 2
  m=$(quant "$WORK/l8b2" q4_k_m)
  for f in ${XC_FORMS:-none static-shared x-emitter,w-emitter,static-shared}; do
    for mp in high medium; do
      timeout 90 $P bench -m "$m" -p 512 -n 32 --eager-steps 0 --device ptx --copy-mib 0 \
        --forms $f --matmul-precision $mp >"$OUT/xc-$f-$mp.txt" 2>&1
      echo "-- l8b2 q4_k_m pp512 $f $mp: exit $?"
      grep -E "compile|prefill |decode " "$OUT/xc-$f-$mp.txt"
    done
  done
fi

if has wcheck; then
  # The defaults' short check: ptx_device, greedy ids on the 1B shape's q4_k_m file against
  # the emitter's forms in 48 KiB and against static-shared, conformance, and the 8B
  # shape's two q4_k_m layers at pp512 (both precisions; medium's profile).
  log wcheck
  t ptx_device .gpu/bin/ptx_device basic
  synth llama-3.2-1b "$WORK/l1b"
  xs_ids xw "$(quant "$WORK/l1b" q4_k_m)" x-emitter,w-emitter,static-shared static-shared
  t exec_conformance_ptx .gpu/bin/exec_conformance_ptx ptx
  grep -E "FAIL|failed|catalogue" "$OUT/exec_conformance_ptx.log" | head -5
  synth llama-3.1-8b "$WORK/l8b2" 2
  m=$(quant "$WORK/l8b2" q4_k_m)
  for mp in high medium; do
    timeout 90 $P bench -m "$m" -p 512 -n 16 --eager-steps 0 --device ptx --copy-mib 0 \
      --matmul-precision $mp >"$OUT/wc-$mp.txt" 2>&1
    echo "-- l8b2 q4_k_m pp512 $mp: exit $?"
    grep -E "compile|prefill " "$OUT/wc-$mp.txt"
  done
  timeout 90 $P bench -m "$m" -p 512 -n 4 --eager-steps 2 --profile 2 --device ptx --copy-mib 0 \
    --matmul-precision medium 2>&1 | sed -n '/profile      prefill/,$p' | head -16
fi

if has xab; then
  # x staged once (the default) against the emitter's form (--forms x-emitter) on the GPU:
  # greedy ids of a 180-token prompt must be the same (the two forms give the same bits);
  # then compile + capture with the driver's JIT cache off, prefill and decode of the 8B
  # shape's two q4_k_m layers for each binary of XAB_BINS (words LABEL=BINARY), and the
  # 1B shape's pp512 and pp2048 at both precisions.
  log xab
  synth llama-3.2-1b "$WORK/l1b"
  synth llama-3.1-8b "$WORK/l8b2" 2
  xs_ids xab "$WORK/l1b" x-emitter
  m=$(quant "$WORK/l8b2" q4_k_m)
  for v in ${XAB_BINS:-"new=$P"}; do
    label=${v%%=*}
    bin=${v#*=}
    for mp in high medium; do
      CUDA_CACHE_DISABLE=1 timeout 200 "$bin" bench -m "$m" -p 512 -n 64 --device ptx \
        --copy-mib 0 --matmul-precision $mp >"$OUT/xab-$label-$mp.txt" 2>&1
      echo "-- $label l8b2 q4_k_m $mp (JIT cache off): exit $?"
      grep -E "compile|prefill |decode " "$OUT/xab-$label-$mp.txt"
    done
  done
  # One JIT thread against the default (are the driver's JITs concurrent at all?).
  CUDA_CACHE_DISABLE=1 POOT_PTX_COMPILE_THREADS=1 timeout 200 $P bench -m "$m" -p 512 -n 64 \
    --device ptx --copy-mib 0 >"$OUT/xab-threads1.txt" 2>&1
  echo "-- new l8b2 q4_k_m high, one compile thread (JIT cache off): exit $?"
  grep -E "compile" "$OUT/xab-threads1.txt"
  for p in 512 2048; do
    for mp in high medium; do
      timeout 120 $P bench -m "$WORK/l1b" -p $p -n 16 --eager-steps 0 --copy-mib 0 \
        --matmul-precision $mp --device ptx >"$OUT/xab-l1b-$p-$mp.txt" 2>&1
      echo "-- l1b pp$p $mp: $(grep -E "^prefill " "$OUT/xab-l1b-$p-$mp.txt")"
    done
  done
fi

if has dec8b; then
  # The full 8B shape by poot's convert --type q4_k_m at each of DEC8B_VARIANTS (words of
  # bench flags, commas for spaces, + for a list's commas), and llama.cpp on the same file; first the 1B shape's
  # pp512 at each of PF_VARIANTS (the opt-in forms beside the defaults). llama.cpp builds
  # on cores 2.. meanwhile; poot runs on cores 0-1 (its device time does not need more).
  log dec8b
  export PEER_DIR=$WORK/peer-llama
  mkdir -p "$PEER_DIR"
  taskset -c "2-$(($(nproc) - 1))" nice -n 10 "$PEER" build >"$OUT/peer-build.log" 2>&1 &
  pin=(taskset -c 0-1)
  synth llama-3.2-1b "$WORK/l1b"
  for v in ${PF_VARIANTS:-"--matmul-precision,high" "--matmul-precision,high,--forms,x-emitter" \
    "--matmul-precision,medium" "--matmul-precision,medium,--forms,x-emitter"}; do
    n=$(echo "$v" | tr -cd 'a-z0-9-' | sed 's/--matmul-precision//; s/--forms//' | head -c 40)
    "${pin[@]}" timeout 120 $P bench -m "$WORK/l1b" -p 512 -n 16 --eager-steps 0 --copy-mib 0 \
      $(vargs "$v") --device ptx >"$OUT/pf-l1b-$n.txt" 2>&1
    echo "-- l1b pp512 $v: exit $?"; grep -E "prefill |compile" "$OUT/pf-l1b-$n.txt"
  done
  synth llama-3.1-8b "$WORK/l8b"
  t0=$(date +%s)
  m=$(quant "$WORK/l8b" q4_k_m)
  echo "-- convert --type q4_k_m of the 8B shape: $(($(date +%s) - t0)) s, $(du -h "$m" | cut -f1)"
  for v in ${DEC8B_VARIANTS:-"--matmul-precision,high" "--matmul-precision,medium" \
    "--matmul-precision,medium,--forms,gemv-one-row"}; do
    n=$(echo "$v" | tr -cd 'a-z0-9-' | sed 's/--matmul-precision//; s/--forms//' | head -c 40)
    "${pin[@]}" timeout 150 $P bench -m "$m" -p 512 -n 64 --eager-steps 0 --copy-mib 0 \
      $(vargs "$v") --device ptx >"$OUT/dec8b-$n.txt" 2>&1
    echo "-- l8b q4_k_m $v: exit $?"; grep -E "prefill |decode |per step|compile" "$OUT/dec8b-$n.txt"
  done
  "$PEER" wait || echo "llama.cpp build failed: $(tail -3 "$OUT/peer-build.log")"
  timeout 200 "$PEER" bench "$m" -- -p 512 -n 64 -fa 1 -r 3 -o md 2>&1 | tee "$OUT/llama-dec8b.md" |
    grep -E "^\|"
fi

if has pf8b; then
  log pf8b
  half=$(($(nproc) / 2))
  export PEER_DIR=$WORK/peer-llama
  mkdir -p "$PEER_DIR"
  taskset -c "$half-$(($(nproc) - 1))" nice -n 19 "$PEER" build >"$OUT/peer-build.log" 2>&1 &
  pin=(taskset -c "0-$((half - 1))")
  synth llama-3.2-1b "$WORK/l1b"
  for p in 512 2048; do
    "${pin[@]}" timeout 300 $P bench -m "$WORK/l1b" -p $p -n 32 --eager-steps 0 --copy-mib 0 \
      --device ptx >"$OUT/pf-l1b-$p.txt" 2>&1
    echo "-- l1b f16 pp$p"; grep -E "prefill |decode |compile" "$OUT/pf-l1b-$p.txt"
  done
  synth llama-3.1-8b "$WORK/l8b"
  "${pin[@]}" timeout 300 $P bench -m "$WORK/l8b" -p 512 -n 16 --eager-steps 0 --copy-mib 0 \
    --device ptx >"$OUT/pf-l8b-f16.txt" 2>&1
  echo "-- l8b f16 pp512"; grep -E "prefill |decode |compile" "$OUT/pf-l8b-f16.txt"
  m=$(quant "$WORK/l8b" q4_k_m)
  "$PEER" wait || echo "llama.cpp build failed"
  for i in 1 2; do
    "${pin[@]}" timeout 300 $P bench -m "$m" -p 512 -n 64 --eager-steps 2 --device ptx \
      >"$OUT/pf-l8b-q4km-$i.txt" 2>&1
    echo "-- l8b q4_k_m ($i)"; grep -E "prefill |decode |per step" "$OUT/pf-l8b-q4km-$i.txt"
  done
  timeout 300 "$PEER" bench "$m" -- -p 512 -n 64 -fa 1 -r 3 -o md 2>&1 | tee "$OUT/llama-pf8b.md" |
    grep -E "^\|"
fi

if has ab; then
  log "ab: ${AB_VARIANTS:-X=1 POOT_PTX_GRID_DEPENDENCY=0}"
  synth llama-3.2-1b "$WORK/l1b"
  for i in 1 2; do
    for v in ${AB_VARIANTS:-"X=1" "POOT_PTX_GRID_DEPENDENCY=0"}; do
      n=$(echo "$v" | tr -cd 'A-Z0-9=' | sed 's/POOT_//g' | head -c 40)
      (export $v; b "ab-l1b-$n-$i" -m "$WORK/l1b" ${AB_ARGS:--p 512 -n 128})
    done
  done
fi

if has bench; then
  log bench
  b demo -m models/poot-demo.gguf -p 64 -n 128
  b stories -m "$POOT_DATA_DIR/models/stories260K/stories260K.bin" \
    --tokenizer "$POOT_DATA_DIR/models/stories260K/tok512.bin" -p 64 -n 128
  synth llama-3.2-1b "$WORK/l1b"
  for q in f16 q8_0 q4_0; do b "l1b-$q" -m "$(quant "$WORK/l1b" $q)" -p 512 -n 128; done
  synth qwen2.5-0.5b "$WORK/q05"
  for q in f16 q4_0; do b "q05-$q" -m "$(quant "$WORK/q05" $q)" -p 512 -n 128; done
fi

if has big; then
  log big
  synth llama-3.1-8b "$WORK/l8b"
  for q in ${BIG_TYPES:-f16 q4_0}; do b "l8b-$q" -m "$(quant "$WORK/l8b" $q)" -p 512 -n 64 --eager-steps 2; done
fi

if has peers; then
  log peers: transformers
  for m in l1b q05 l8b; do
    [ -d "$WORK/$m" ] || continue
    timeout 300 python3 bench/hf_decode.py "$WORK/$m" -p 512 -n 64 >"$OUT/hf-$m.json" \
      2>"$OUT/hf-$m.err" && cat "$OUT/hf-$m.json" || { echo "hf $m failed"; tail -3 "$OUT/hf-$m.err"; }
  done
fi
if has sample; then
  log sample
  synth llama-3.2-1b "$WORK/l1b"
  for i in 1 2; do b sample-l1b-f16-$i -m "$WORK/l1b" -p 0 -n 128 --sample --eager-steps 0; done
  # the grammar mask on this host's quiet cores (one core per mask, as the target says)
  timeout 300 .gpu/bin/json_schema_mask_bench_test >"$OUT/mask-bench.log" 2>&1
  grep -iE "prepared|cold|prepare" "$OUT/mask-bench.log" | head -12
  for n in sample-l1b-f16-1 sample-l1b-f16-2; do
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], d.get('sample'))" \
      "$OUT/$n.json" "$n" 2>/dev/null
  done
fi

if has llama; then
  log "llama: llama.cpp and poot on the same GGUF files"
  for shape in ${LLAMA_SHAPES:-llama-3.2-1b}; do
    case $shape in llama-3.1-8b) d=$WORK/l8b ;; qwen2.5-0.5b) d=$WORK/q05 ;; *) d=$WORK/l1b ;; esac
    synth "$shape" "$d"
    [ -f "$d-f16.gguf" ] || "$PEER" convert "$d" "$d-f16.gguf" || continue
    files=("$d-f16.gguf")
    "$PEER" wait || { echo "llama.cpp build failed: $(tail -3 "$PEER_DIR/build.log")"; break; }
    for q in ${LLAMA_TYPES:-Q4_K_M Q6_K Q8_0 Q4_0}; do
      [ -f "$d-$q.gguf" ] || "$PEER" quantize "$d-f16.gguf" "$d-$q.gguf" "$q" || continue
      files+=("$d-$q.gguf")
    done
    for f in "${files[@]}"; do
      n=$(basename "$f" .gguf)
      b "poot-$n" -m "$f" -p 512 -n 128 --eager-steps 0
      b "poot-$n-d4000" -m "$f" -p 0 -n 128 --context 4000 --eager-steps 0
    done
    timeout 600 "$PEER" bench "${files[@]}" -- -p 512 -n 128 -fa 1 -r 3 -o md 2>&1 | tee "$OUT/llama-$shape.md" | grep -E "^\|"
    timeout 600 "$PEER" bench "${files[@]}" -- -p 0 -n 128 -d 4000 -fa 1 -r 2 -o md 2>&1 | tee "$OUT/llama-$shape-d4000.md" | grep -E "^\|"
  done
fi

if has embed; then
  log "embed: poot embed --bench beside sentence-transformers"
  # all-MiniLM-L6-v2's shape with random weights (the real weights are too big
  # to carry), around its tokenizer (scripts/gpu-pack.sh); EMBED_MODEL names a
  # real folder instead.
  em=${EMBED_MODEL:-$WORK/minilm-shape}
  if [ ! -f "$em/config.json" ] && [ -f "$POOT_DATA_DIR/encoders/tokenizer.json" ]; then
    python3 scripts/reference/encoder_models.py minilm-shape "$em" \
      --tokenizer "$POOT_DATA_DIR/encoders/tokenizer.json" >"$OUT/minilm-shape.log" 2>&1
  fi
  if [ ! -f "$em/config.json" ]; then
    echo "embed: no model (.gpu/data/encoders/tokenizer.json is absent; set EMBED_MODEL)"
  else
    for i in 1 2; do
      timeout 300 $P embed -m "$em" --device ptx --bench --batch 64 --json >"$OUT/embed-ptx-$i.json" \
        2>"$OUT/embed-ptx-$i.err" && cat "$OUT/embed-ptx-$i.json" || tail -3 "$OUT/embed-ptx-$i.err"
    done
    timeout 300 $P embed -m "$em" --device ptx --bench --batch 1 --json >"$OUT/embed-ptx-b1.json" 2>&1 &&
      cat "$OUT/embed-ptx-b1.json"
    # The device against the oracle (random MiniLM shape and the cross-encoder).
    mkdir -p "$WORK/encoders" && ln -sfn "$em" "$WORK/encoders/all-MiniLM-L6-v2"
    python3 scripts/reference/encoder_models.py cross-encoder "$WORK/encoders/cross-encoder" \
      --tokenizer "$em/tokenizer.json" >/dev/null 2>&1
    [ -x .gpu/bin/llm_encoders_oracle ] && POOT_BINARY_DIR=$WORK t llm_encoders_ptx .gpu/bin/llm_encoders_oracle ptx
    timeout 300 python3 bench/hf_embed.py "$em" --batch 64 >"$OUT/hf-embed.json" 2>"$OUT/hf-embed.err" &&
      cat "$OUT/hf-embed.json" || { echo "hf embed failed"; tail -3 "$OUT/hf-embed.err"; }
  fi
fi

if has batch; then
  log "batch: the batched runner (paged K/V) on PTX"
  t llm_batch_ptx .gpu/bin/llm_batch_vulkan ptx
  synth llama-3.2-1b "$WORK/l1b"
  b batch-l1b-single -m "$WORK/l1b" -p 128 -n 64
  for B in ${BATCH_SIZES:-1 8 32 64}; do
    timeout 300 $P bench -m "$WORK/l1b" -p 128 -n 64 --batch "$B" --device ptx --json \
      >"$OUT/batch-l1b-$B.json" 2>"$OUT/batch-l1b-$B.err"
    echo "batch-l1b B=$B: exit $? $(tr -d '\n' <"$OUT/batch-l1b-$B.json" | head -c 600)"
  done
fi

if has bpeer; then
  # llama.cpp's llama-batched-bench on its own f16 GGUF of the same folder the
  # batch phase measured: -npp and -ntg as poot bench's -p and -n there
  # (S_TG t/s is the decode throughput of all sequences together).
  log "bpeer: llama-batched-bench beside poot bench --batch"
  synth llama-3.2-1b "$WORK/l1b"
  [ -f "$WORK/l1b-f16.gguf" ] || "$PEER" convert "$WORK/l1b" "$WORK/l1b-f16.gguf" >"$OUT/bpeer-convert.log" 2>&1
  if "$PEER" wait; then
    npl=$(echo ${BATCH_SIZES:-1 8 32 64} | tr ' ' ,)
    timeout 400 "$PEER" batched "$WORK/l1b-f16.gguf" -c 16384 -npp 128 -ntg 64 -npl "$npl" -fa 1 \
      >"$OUT/bpeer-l1b.log" 2>&1
    grep -E "^\|" "$OUT/bpeer-l1b.log"
  else
    echo "llama.cpp build failed: $(tail -3 "$PEER_DIR/build.log" 2>/dev/null)"
  fi
fi

if has sload; then
  # poot serve's batched engine under load (bench/serve_load.py): SLOAD_STREAMS
  # concurrent streamed completions a round (default 64) of about 128 prompt
  # tokens and 64 generated, --max-seqs as many, on the folder the batch phase
  # measures; compare its tok/s with `poot bench --batch` there.
  log "sload: poot serve --max-seqs under load"
  synth llama-3.2-1b "$WORK/l1b"
  n=${SLOAD_STREAMS:-64}
  timeout 400 python3 bench/serve_load.py --poot "$P" -m "$WORK/l1b" --device ptx -n "$n" \
    --max-seqs "$n" --rounds 2 --prompt-words 120 --max-tokens 64 --ctx 512 2>&1 |
    tee "$OUT/sload-l1b.log" | tail -6
fi

if has hfvec; then
  log hfvec
  timeout 300 python3 scripts/hf_sampling_vectors.py --out "$PACK/hf_vectors.json" >"$OUT/hfvec.log" 2>&1
  tail -3 "$OUT/hfvec.log"
fi
tar czf "$PACK/results.tgz" -C "$OUT" . 2>/dev/null
log done
