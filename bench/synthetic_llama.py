#!/usr/bin/env python3
"""Writes a random-weight Hugging Face Llama-family folder of a real model's
shape, for speed measurements (`poot convert` then `poot bench`).

    synthetic_llama.py --shape llama-3.2-1b --tokenizer DIR --out DIR

The weights are random (not a trained model): only shapes and bytes matter for
a decode benchmark. Needs numpy; writes safetensors by hand (no other package).
"""
import argparse
import json
import os
import shutil
import struct

import numpy as np

SHAPES = {
    # name: (arch, hidden, layers, heads, kv_heads, ffn, vocab, tied, qkv_bias, theta)
    "llama-3.2-1b": ("llama", 2048, 16, 32, 8, 8192, 128256, True, False, 500000.0),
    "qwen2.5-0.5b": ("qwen2", 896, 24, 14, 2, 4864, 151936, True, True, 1000000.0),
    "llama-3.1-8b": ("llama", 4096, 32, 32, 8, 14336, 128256, False, False, 500000.0),
}


def write_safetensors(path, tensors):
    header = {}
    offset = 0
    for name, arr in tensors:
        n = arr.nbytes
        header[name] = {"dtype": "F16" if arr.dtype == np.float16 else "F32",
                        "shape": list(arr.shape), "data_offsets": [offset, offset + n]}
        offset += n
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * ((8 - len(blob) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for _, arr in tensors:
            f.write(np.ascontiguousarray(arr).tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=sorted(SHAPES), required=True)
    ap.add_argument("--tokenizer", required=True, help="folder with tokenizer.json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layers", type=int, default=0,
                    help="keep only this many layers (the shape's own count when 0): "
                         "every kernel of the real shape, for compile checks")
    a = ap.parse_args()
    arch, h, L, nh, nkv, ffn, vocab, tied, bias, theta = SHAPES[a.shape]
    if a.layers > 0:
        L = min(L, a.layers)
    hd = h // nh
    rng = np.random.default_rng(a.seed)
    # Normal(0, 0.02) values drawn once into a pool and read cyclically from
    # a random start per tensor: only shapes and bytes matter for a decode
    # benchmark, and an 8B model is made in seconds instead of minutes.
    pool = (rng.standard_normal(1 << 24, dtype=np.float32) * 0.02).astype(np.float16)

    def w(*shape):
        n = int(np.prod(shape))
        start = int(rng.integers(0, pool.size))
        reps = (start + n + pool.size - 1) // pool.size
        flat = np.tile(pool, reps)[start:start + n] if reps > 1 else pool[start:start + n]
        return np.ascontiguousarray(flat).reshape(shape)

    t = [("model.embed_tokens.weight", w(vocab, h))]
    for i in range(L):
        p = f"model.layers.{i}."
        t += [(p + "input_layernorm.weight", np.ones(h, np.float32)),
              (p + "self_attn.q_proj.weight", w(nh * hd, h)),
              (p + "self_attn.k_proj.weight", w(nkv * hd, h)),
              (p + "self_attn.v_proj.weight", w(nkv * hd, h)),
              (p + "self_attn.o_proj.weight", w(h, nh * hd)),
              (p + "post_attention_layernorm.weight", np.ones(h, np.float32)),
              (p + "mlp.gate_proj.weight", w(ffn, h)),
              (p + "mlp.up_proj.weight", w(ffn, h)),
              (p + "mlp.down_proj.weight", w(h, ffn))]
        if bias:
            t += [(p + "self_attn.q_proj.bias", np.zeros(nh * hd, np.float32)),
                  (p + "self_attn.k_proj.bias", np.zeros(nkv * hd, np.float32)),
                  (p + "self_attn.v_proj.bias", np.zeros(nkv * hd, np.float32))]
    t.append(("model.norm.weight", np.ones(h, np.float32)))
    if not tied:
        t.append(("lm_head.weight", w(vocab, h)))
    os.makedirs(a.out, exist_ok=True)
    write_safetensors(os.path.join(a.out, "model.safetensors"), t)
    arch_name = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM"}[arch]
    cfg = {"architectures": [arch_name], "model_type": arch, "hidden_size": h,
           "intermediate_size": ffn, "num_hidden_layers": L, "num_attention_heads": nh,
           "num_key_value_heads": nkv, "head_dim": hd, "vocab_size": vocab,
           "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "rope_theta": theta,
           "tie_word_embeddings": tied, "torch_dtype": "float16", "bos_token_id": 1,
           "eos_token_id": 2}
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        src = os.path.join(a.tokenizer, name)
        if os.path.exists(src):
            shutil.copy(src, os.path.join(a.out, name))
    print(f"{a.shape}: {sum(x.size for _, x in t) / 1e6:.1f}M parameters -> {a.out}")


if __name__ == "__main__":
    main()
