#!/usr/bin/env python3
"""The GGUF route of the families `poot convert` does not write yet (Mistral
with its window, Gemma 2, Gemma 3, Phi-3 with longrope): the reference models
of scripts/reference/make_models.py are written as GGUF files the way
llama.cpp's converter writes them (gguf-py: its tensor names, metadata keys,
Gemma's +1 on norm weights, Llama's Q/K permutation, Phi-3's rope factor
tensors), and `poot verify greedy` must give the same greedy ids and logits
(within the f32 tolerance of docs/verification.md) from the GGUF file as from
the safetensors folder, which the tier-3 tests check against transformers.

Exit 0 pass, 1 failure, 77 skipped (gguf-py, numpy, poot or data absent)."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    import gguf
except ImportError as e:  # pragma: no cover
    print("SKIP: %s" % e)
    sys.exit(77)

from verify_hf import tolerances  # noqa: E402

MODELS = ["mistral", "gemma2", "gemma3", "phi3", "phi3-long"]
PROMPTS = ["Once upon a time", "The capital of France is"]
STEPS = 16


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            assert info["dtype"] == "F32"
            a, b = info["data_offsets"]
            f.seek(base + a)
            out[name] = np.frombuffer(f.read(b - a), dtype="<f4").reshape(info["shape"]).copy()
        return out


def permute(w, n_head):
    """llama.cpp's convert_hf_to_gguf LlamaModel.permute (rotate-half → interleaved)."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


HF_TO_GGUF = [
    ("model.embed_tokens.weight", "token_embd.weight"),
    ("model.norm.weight", "output_norm.weight"),
    ("lm_head.weight", "output.weight"),
]
LAYER = {
    "input_layernorm": "attn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "self_attn.qkv_proj": "attn_qkv",
    "self_attn.q_norm": "attn_q_norm",
    "self_attn.k_norm": "attn_k_norm",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.gate_up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}


def gguf_name(hf, family):
    for a, b in HF_TO_GGUF:
        if hf == a:
            return b
    parts = hf.split(".")
    layer = int(parts[2])
    stem = ".".join(parts[3:-1])
    if stem == "post_attention_layernorm":
        g = "post_attention_norm" if family == "gemma" else "ffn_norm"
    elif stem == "pre_feedforward_layernorm":
        g = "ffn_norm"
    elif stem == "post_feedforward_layernorm":
        g = "post_ffw_norm"
    else:
        g = LAYER[stem]
    return "blk.%d.%s.%s" % (layer, g, parts[-1])


def write_gguf(folder, out):
    cfg = json.load(open(os.path.join(folder, "config.json")))
    mt = cfg["model_type"]
    arch = {"mistral": "llama", "gemma2": "gemma2", "gemma3_text": "gemma3", "phi3": "phi3"}[mt]
    family = "gemma" if arch.startswith("gemma") else arch
    H, nh, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or H // nh
    w = gguf.GGUFWriter(out, arch)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(H)
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_head_count(nh)
    w.add_head_count_kv(nkv)
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_freq_base(cfg["rope_theta"])
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_count(hd)
    w.add_vocab_size(cfg["vocab_size"])
    if cfg.get("sliding_window"):
        w.add_uint32("%s.attention.sliding_window" % arch, cfg["sliding_window"])
    if arch == "gemma2":
        w.add_float32("gemma2.attn_logit_softcapping", cfg["attn_logit_softcapping"])
        w.add_float32("gemma2.final_logit_softcapping", cfg["final_logit_softcapping"])
    if arch.startswith("gemma"):
        w.add_float32("%s.attention.scale" % arch, cfg["query_pre_attn_scalar"] ** -0.5)
    if arch == "gemma3":
        w.add_array("gemma3.attention.sliding_window_pattern",
                    [t == "sliding_attention" for t in cfg["layer_types"]])
        rs = cfg["rope_scaling"]
        w.add_string("gemma3.rope.scaling.type", rs["rope_type"])
        w.add_float32("gemma3.rope.scaling.factor", rs["factor"])
    tensors = load_safetensors(os.path.join(folder, "model.safetensors"))
    if arch == "phi3":
        rs = cfg["rope_scaling"]
        orig = cfg["original_max_position_embeddings"]
        scale = cfg["max_position_embeddings"] / orig
        attn = 1.0 if scale <= 1.0 else (1 + np.log(scale) / np.log(orig)) ** 0.5
        w.add_uint32("phi3.rope.scaling.original_context_length", orig)
        w.add_float32("phi3.rope.scaling.attn_factor", float(attn))
        w.add_tensor("rope_factors_long.weight", np.array(rs["long_factor"], dtype=np.float32))
        w.add_tensor("rope_factors_short.weight", np.array(rs["short_factor"], dtype=np.float32))
    for name in sorted(tensors, key=lambda n: (n != "model.embed_tokens.weight", n)):
        t = tensors[name]
        g = gguf_name(name, family)
        if arch == "llama" and g.endswith("attn_q.weight"):
            t = permute(t, nh)
        if arch == "llama" and g.endswith("attn_k.weight"):
            t = permute(t, nkv)
        if family == "gemma" and g.endswith("norm.weight"):
            t = t + np.float32(1.0)
        w.add_tensor(g, np.ascontiguousarray(t, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return cfg


def run_poot(poot, model, tok, prompt):
    cmd = [poot, "verify", "greedy", "-m", model, "-p", prompt, "-n", str(STEPS), "--json",
           "--logits", "2", "--ignore-eos"]
    if tok:
        cmd += ["--tokenizer", tok]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout)


def main():
    poot = os.environ.get("POOT")
    src = os.environ.get("POOT_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    data = os.environ.get("POOT_DATA_DIR", "")
    maker = os.path.join(src, "scripts", "reference", "make_models.py")
    if not poot or not os.path.exists(poot):
        print("SKIP: the poot binary is not built")
        return 77
    if not os.path.exists(maker):
        print("SKIP: scripts/reference/make_models.py is absent")
        return 77
    if not os.path.isdir(os.path.join(data, "hf-tokenizers")):
        print("SKIP: the test data (hf-tokenizers) is absent")
        return 77
    tmp = tempfile.mkdtemp(prefix="poot-gguf-families-")
    failures = 0
    try:
        r = subprocess.run([sys.executable, maker, tmp, "--data", data, "--only"] + MODELS,
                           capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: make_models.py: " + r.stderr.strip())
            return 1
        for m in MODELS:
            folder = os.path.join(tmp, m)
            path = os.path.join(tmp, m + ".gguf")
            cfg = write_gguf(folder, path)
            tok = os.path.join(folder, "tokenizer.json")
            for prompt in PROMPTS:
                a = run_poot(poot, folder, None, prompt)
                b = run_poot(poot, path, tok, prompt)
                where = "%s %r" % (m, prompt)
                if a["prompt_ids"] != b["prompt_ids"]:
                    print("FAIL %s: prompt ids differ" % where)
                    failures += 1
                    continue
                la = np.array(a["logits"], dtype=np.float64)
                rms = float(np.sqrt(np.mean(np.square(la))))
                tol, flip = tolerances(cfg, len(a["prompt_ids"]) + STEPS, "f32", rms)
                diverged = STEPS
                for k in range(STEPS):
                    if a["ids"][k] != b["ids"][k]:
                        diverged = k
                        if a["margins"][k] <= flip:
                            print("note %s: step %d flips at margin %.4g <= %.4g" % (where, k, a["margins"][k], flip))
                        else:
                            print("FAIL %s: step %d: GGUF %d, safetensors %d (margin %.4g > %.4g)"
                                  % (where, k, b["ids"][k], a["ids"][k], a["margins"][k], flip))
                            failures += 1
                        break
                steps = min(2, diverged + 1)
                err = float(np.max(np.abs(la[:steps] - np.array(b["logits"][:steps], dtype=np.float64))))
                status = "ok" if err <= tol else "FAIL"
                if err > tol:
                    failures += 1
                print("%s %s: GGUF vs safetensors max |logit diff| %.3g (tolerance %.3g), ids %s"
                      % (status, where, err, tol, "equal" if diverged == STEPS else "diverge at %d" % diverged))
        print("%d failures" % failures)
        return 1 if failures else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
