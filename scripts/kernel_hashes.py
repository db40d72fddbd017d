#!/usr/bin/env python3
"""Hashes every kernel poot renders for a fixed set of models, steps and
targets, so a refactoring can show that the same kernels come out.

    kernel_hashes.py --poot build/tools/poot --data ../shared/data [--check FILE | --write FILE]

Models: the bundled demo model (f16, and converted to q8_0 and q4_0),
stories260K (llama2.c) and a Llama-3.2-1B-shaped f16 safetensors folder whose
weights are a sparse file of zeros (planning reads shapes and dtypes only).
Steps: decode, decode at batch 4, prefill:64 (and the 1B shape's
prefill:128). Targets: every target
`poot compile` knows. Each line of the manifest is
`model step target file sha256`; plan.txt is hashed with the kernels.
Exits 1 and lists the differing lines when --check finds a difference.
"""
import argparse
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

TARGETS = ("ptx", "ptx90", "glsl", "wgsl", "amdgpu")
STEPS = (("decode", 1), ("decode", 4), ("prefill:64", 1))
# Steps for one model only: the 1B shape's prefill past 64 rows, where the
# GEMM on matrix fragments stages x once (gemm_x; docs/compiler.md).
MODEL_STEPS = {"llama-3.2-1b": (("prefill:128", 1),)}


def sparse_llama_1b(out):
    """A Llama-3.2-1B-shaped folder: config.json and a sparse safetensors file."""
    h, layers, nh, nkv, ffn, vocab = 2048, 16, 32, 8, 8192, 128256
    hd = h // nh
    shapes = [("model.embed_tokens.weight", "F16", (vocab, h))]
    for i in range(layers):
        p = f"model.layers.{i}."
        shapes += [(p + "input_layernorm.weight", "F32", (h,)),
                   (p + "self_attn.q_proj.weight", "F16", (nh * hd, h)),
                   (p + "self_attn.k_proj.weight", "F16", (nkv * hd, h)),
                   (p + "self_attn.v_proj.weight", "F16", (nkv * hd, h)),
                   (p + "self_attn.o_proj.weight", "F16", (h, nh * hd)),
                   (p + "post_attention_layernorm.weight", "F32", (h,)),
                   (p + "mlp.gate_proj.weight", "F16", (ffn, h)),
                   (p + "mlp.up_proj.weight", "F16", (ffn, h)),
                   (p + "mlp.down_proj.weight", "F16", (h, ffn))]
    shapes.append(("model.norm.weight", "F32", (h,)))
    header, offset = {}, 0
    for name, dt, shape in shapes:
        n = (2 if dt == "F16" else 4)
        for d in shape:
            n *= d
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * ((8 - len(blob) % 8) % 8)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        f.truncate(8 + len(blob) + offset)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": h,
           "intermediate_size": ffn, "num_hidden_layers": layers, "num_attention_heads": nh,
           "num_key_value_heads": nkv, "head_dim": hd, "vocab_size": vocab,
           "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
           "tie_word_embeddings": True, "torch_dtype": "float16", "bos_token_id": 128000,
           "eos_token_id": 128001}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    return out


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit(f"kernel_hashes: {' '.join(cmd)} failed:\n{r.stdout}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--poot", required=True)
    ap.add_argument("--data", required=True, help="the shared data folder (models/stories260K)")
    ap.add_argument("--demo", default=os.path.join(os.path.dirname(__file__), "..", "models",
                                                   "poot-demo.gguf"))
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--check")
    g.add_argument("--write")
    a = ap.parse_args()
    stories = os.path.join(a.data, "models", "stories260K", "stories260K.bin")
    if not os.path.exists(stories):
        print(f"SKIP: {stories} is not there")
        return 77
    tmp = tempfile.mkdtemp(prefix="poot-kh-")
    models = {"demo": a.demo}
    for q in ("q8_0", "q4_0"):
        path = os.path.join(tmp, f"demo-{q}.gguf")
        models[f"demo-{q}"] = path
    models["stories260K"] = stories
    models["llama-3.2-1b"] = sparse_llama_1b(os.path.join(tmp, "llama-3.2-1b"))
    os.makedirs(os.path.join(tmp, "emit"))
    lines = []
    for mname, path in models.items():
        if mname.startswith("demo-q"):
            run([a.poot, "convert", a.demo, path, "--type", mname[5:]])
        for step, batch in STEPS + MODEL_STEPS.get(mname, ()):
            for t in TARGETS:
                d = os.path.join(tmp, "emit", f"{mname}-{step}-{batch}-{t}".replace(":", "_"))
                run([a.poot, "compile", "-m", path, "--step", step, "--batch", str(batch),
                     "--target", t, "--emit", d])
                for fn in sorted(os.listdir(d)):
                    with open(os.path.join(d, fn), "rb") as f:
                        digest = hashlib.sha256(f.read()).hexdigest()
                    lines.append(f"{mname} {step}x{batch} {t} {fn} {digest}")
    shutil.rmtree(tmp)
    text = "".join(line + "\n" for line in lines)
    if a.write:
        with open(a.write, "w") as f:
            f.write(text)
        print(f"kernel_hashes: {len(lines)} files hashed into {a.write}")
        return 0
    with open(a.check) as f:
        want = f.read().splitlines()
    if want == lines:
        print(f"kernel_hashes: {len(lines)} files identical")
        return 0
    ws, gs = set(want), set(lines)
    for line in sorted(ws - gs):
        print("- " + line)
    for line in sorted(gs - ws):
        print("+ " + line)
    print(f"kernel_hashes: {len(ws - gs)} expected lines missing, {len(gs - ws)} new")
    return 1


if __name__ == "__main__":
    sys.exit(main())
