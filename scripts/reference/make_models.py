#!/usr/bin/env python3
"""Write the seeded random-weight reference models, one Hugging Face folder each.

Usage:
    make_models.py OUTDIR [--only NAME ...] [--q8_0] [--data DIR] [--list]

Each folder holds config.json, model.safetensors (f32), tokenizer.json,
tokenizer_config.json (with a chat template and bos/eos) and cases.json (the
prompts that scripts/reference/hf_greedy.py runs through the model).

The weights come from a counter-based generator (splitmix64 over uint64 counters,
keyed by a 64-bit FNV-1a hash of "<model>/<tensor name>") mapped to floats with
exact arithmetic only, so the files are byte-identical on every machine and with
every numpy version.  Only numpy is needed; --q8_0 also needs the `gguf` package:
it writes `<name>-q8_0` folders whose 2-D weights went through gguf's q8_0
quantize -> dequantize (the reference for a q8_0 GGUF of the same model).

The tokenizer files come from DATA/hf-tokenizers and some chat templates from
DATA/chat-templates, where DATA is --data, else $POOT_DATA_DIR, else
../shared/data relative to the repository root.
"""

import argparse
import json
import os
import struct
import sys

import numpy as np

U64 = np.uint64
GOLDEN = U64(0x9E3779B97F4A7C15)
MIX1 = U64(0xBF58476D1CE4E5B9)
MIX2 = U64(0x94D049BB133111EB)

HIDDEN = 64
HEAD_DIM = 16
HEADS = 4
INTER = 128
# Every generated sequence stays inside these many positions.
MAX_SEQ = 64


# ---------------------------------------------------------------- generator


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for b in text.encode("utf-8"):
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def splitmix64(counter):
    """splitmix64's output function applied to each uint64 of `counter`."""
    with np.errstate(over="ignore"):
        z = counter + GOLDEN
        z = (z ^ (z >> U64(30))) * MIX1
        z = (z ^ (z >> U64(27))) * MIX2
        return z ^ (z >> U64(31))


def uniform(key, n):
    """n values in [-1, 1), multiples of 2^-23, exact in f32 and f64."""
    with np.errstate(over="ignore"):
        counter = np.arange(n, dtype=U64) * GOLDEN + U64(fnv1a64(key))
    bits = (splitmix64(counter) >> U64(40)).astype(np.int64)  # 24 random bits
    return (bits - (1 << 23)).astype(np.float64) / float(1 << 23)


def tensor(model, name, shape, std, mean=0.0):
    """Uniform values with the given mean and standard deviation, as f32.

    Only correctly rounded IEEE operations are used (one multiply, one add,
    one conversion), so the result does not depend on the machine."""
    n = int(np.prod(shape))
    u = uniform(model + "/" + name, n)
    half_width = std * 3.0 ** 0.5
    return (u * half_width + mean).astype(np.float32).reshape(shape)


# ---------------------------------------------------------------- models

TOKENIZERS = {
    "llama2": {"vocab": 32000, "bos": 1, "eos": 2},
    "llama3": {"vocab": 128256, "bos": 128000, "eos": [128001, 128009]},
    "qwen3": {"vocab": 151936, "bos": 151643, "eos": 151645},
}

# An own Llama-2 style chat template (the tokenizer package ships none).
LLAMA2_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}"
    "{% set system = '<<SYS>>\\n' + messages[0]['content'] + '\\n<</SYS>>\\n\\n' %}"
    "{% set messages = messages[1:] %}"
    "{% else %}{% set system = '' %}{% endif %}"
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}"
    "{{ bos_token + '[INST] ' + (system if loop.first else '') + message['content'] | trim + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}"
    "{{ ' ' + message['content'] | trim + ' ' + eos_token }}"
    "{% endif %}{% endfor %}"
)

PLAIN_PROMPTS = [
    "Once upon a time",
    "The capital of France is",
    "def fibonacci(n):\n    return",
    "Größe, naïve café: 東京へ 🚀 привет",
]
CHAT_MESSAGES = [{"role": "user", "content": "What is the capital of France? Answer briefly."}]


def llama_like(name, family, arch, model_type, tok, layers, kv_heads, tied, extra):
    cfg = {
        "architectures": [arch],
        "model_type": model_type,
        "vocab_size": TOKENIZERS[tok]["vocab"],
        "hidden_size": HIDDEN,
        "intermediate_size": INTER,
        "num_hidden_layers": layers,
        "num_attention_heads": HEADS,
        "num_key_value_heads": kv_heads,
        "hidden_act": "silu",
        "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "tie_word_embeddings": tied,
        "bos_token_id": TOKENIZERS[tok]["bos"],
        "eos_token_id": TOKENIZERS[tok]["eos"],
        "torch_dtype": "float32",
        "use_cache": True,
    }
    cfg.update(extra)
    return {"name": name, "family": family, "tokenizer": tok, "config": cfg}


def longrope_factors(long):
    n = HEAD_DIM // 2
    if long:
        return [round(1.0 + 3.0 * (i / (n - 1)) ** 2 * (n - 1), 4) for i in range(n)]
    return [round(1.0 + 0.07 * i, 4) for i in range(n)]


def model_specs():
    specs = []
    specs.append(llama_like("llama2", "llama", "LlamaForCausalLM", "llama", "llama2", 2, 4, False,
                            {"attention_bias": False, "mlp_bias": False}))
    specs.append(llama_like("llama3", "llama", "LlamaForCausalLM", "llama", "llama3", 2, 2, True, {
        "head_dim": HEAD_DIM, "attention_bias": False, "mlp_bias": False,
        "max_position_embeddings": 131072, "rope_theta": 500000.0,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
    }))
    specs.append(llama_like("llama-linear", "llama", "LlamaForCausalLM", "llama", "llama2", 2, 2, False, {
        "attention_bias": False, "mlp_bias": False, "max_position_embeddings": 8192,
        "rope_scaling": {"type": "linear", "factor": 2.0},
    }))
    specs.append(llama_like("mistral", "mistral", "MistralForCausalLM", "mistral", "llama2", 2, 2, False, {
        "head_dim": HEAD_DIM, "sliding_window": 8, "rope_theta": 1000000.0,
        "max_position_embeddings": 32768,
    }))
    specs.append(llama_like("qwen2", "qwen2", "Qwen2ForCausalLM", "qwen2", "qwen3", 2, 2, False, {
        "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "max_position_embeddings": 32768,
        "use_sliding_window": False, "sliding_window": 32768, "max_window_layers": 21,
    }))
    specs.append(llama_like("qwen3", "qwen3", "Qwen3ForCausalLM", "qwen3", "qwen3", 2, 2, True, {
        "head_dim": HEAD_DIM, "attention_bias": False, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
        "max_position_embeddings": 40960, "use_sliding_window": False, "sliding_window": None,
        "max_window_layers": 28,
    }))
    gemma_common = {
        "head_dim": HEAD_DIM, "hidden_activation": "gelu_pytorch_tanh", "hidden_act": "gelu_pytorch_tanh",
        "rms_norm_eps": 1e-6, "attention_bias": False, "pad_token_id": 0, "sliding_window": 8,
        "max_position_embeddings": 8192,
    }
    g2 = llama_like("gemma2", "gemma", "Gemma2ForCausalLM", "gemma2", "llama2", 3, 2, True, gemma_common)
    g2["config"].update({"query_pre_attn_scalar": 24, "attn_logit_softcapping": 50.0,
                         "final_logit_softcapping": 30.0})
    specs.append(g2)
    g3 = llama_like("gemma3", "gemma", "Gemma3ForCausalLM", "gemma3_text", "llama2", 3, 2, True, gemma_common)
    g3["config"].update({
        "query_pre_attn_scalar": 16, "attn_logit_softcapping": None, "final_logit_softcapping": None,
        "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0},
        "sliding_window_pattern": 2,
        "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
        "max_position_embeddings": 32768,
    })
    specs.append(g3)
    phi_common = {"pad_token_id": 0, "sliding_window": None, "attention_bias": False}
    p = llama_like("phi3", "phi3", "Phi3ForCausalLM", "phi3", "llama2", 2, 2, False, phi_common)
    p["config"].update({
        "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
        "rope_scaling": {"type": "longrope", "short_factor": longrope_factors(False),
                         "long_factor": longrope_factors(True)},
    })
    specs.append(p)
    # Every sequence is longer than original_max_position_embeddings, so the
    # long factors apply at every step (and the attention factor is sqrt(3)).
    p = llama_like("phi3-long", "phi3", "Phi3ForCausalLM", "phi3", "llama2", 2, 4, False, phi_common)
    p["config"].update({
        "max_position_embeddings": 64, "original_max_position_embeddings": 4,
        "rope_scaling": {"type": "longrope", "short_factor": longrope_factors(False),
                         "long_factor": longrope_factors(True)},
    })
    specs.append(p)
    # Cases: the logits file stores [cases, 2, vocab] f32, so the big
    # vocabularies get fewer cases to keep the committed vectors small.
    for i, s in enumerate(specs):
        if s["tokenizer"] == "llama2":
            plain = [PLAIN_PROMPTS[i % 2], PLAIN_PROMPTS[2 + i % 2]]
        elif s["name"] == "qwen2":
            plain = [PLAIN_PROMPTS[2]]
        else:
            plain = [PLAIN_PROMPTS[3]]
        s["cases"] = [{"prompt": p, "chat": False} for p in plain]
        s["cases"].append({"prompt": None, "chat": True, "messages": CHAT_MESSAGES})
    return specs


CHAT_TEMPLATES = {
    # model name -> template file under DATA/chat-templates (None: own or the tokenizer's)
    "mistral": "mistralai-Mistral-Nemo-Instruct-2407.jinja",
    "qwen2": "Qwen-Qwen2.5-7B-Instruct.jinja",
    "gemma2": "google-gemma-2-2b-it.jinja",
    "gemma3": "google-gemma-2-2b-it.jinja",
    "phi3": "microsoft-Phi-3.5-mini-instruct.jinja",
    "phi3-long": "microsoft-Phi-3.5-mini-instruct.jinja",
}


# ---------------------------------------------------------------- weights


def norm_weight(model, name, size, gemma, gain=1.0, spread=0.2):
    """RMSNorm weight with effective gain about `gain` (gemma stores gain - 1)."""
    mean = gain - 1.0 if gemma else gain
    return tensor(model, name, [size], spread / 3.0 ** 0.5 * gain, mean)


def linear(model, name, out_dim, in_dim, gain):
    """[out, in] weight whose output RMS is about gain x the input RMS."""
    return tensor(model, name, [out_dim, in_dim], gain / in_dim ** 0.5)


def make_weights(spec):
    cfg = spec["config"]
    m = spec["name"]
    fam = spec["family"]
    arch = cfg["architectures"][0]
    gemma = fam == "gemma"
    V, H, L = cfg["vocab_size"], cfg["hidden_size"], cfg["num_hidden_layers"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd, inter = HEAD_DIM, cfg["intermediate_size"]
    tied = cfg["tie_word_embeddings"]
    qk_norm = arch in ("Qwen3ForCausalLM", "Gemma3ForCausalLM")
    w = {}

    # Residual stream scales: with tied embeddings the branches dominate the
    # token's own embedding, otherwise the next token would be the current one.
    emb_rms = (0.08 if gemma else 0.15) if tied else 1.0
    if gemma:
        emb_rms /= H ** 0.5  # the model multiplies by sqrt(hidden)
    w["model.embed_tokens.weight"] = tensor(m, "embed", [V, H], emb_rms)
    qk_gain = 1.4  # attention scores with a standard deviation of about 2
    branch = 1.5
    for i in range(L):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm_weight(m, p + "in_norm", H, gemma)
        q = linear(m, p + "q", nh * hd, H, qk_gain)
        k = linear(m, p + "k", nkv * hd, H, qk_gain)
        v = linear(m, p + "v", nkv * hd, H, 1.0)
        if arch == "Phi3ForCausalLM":
            w[p + "self_attn.qkv_proj.weight"] = np.concatenate([q, k, v], axis=0)
        else:
            w[p + "self_attn.q_proj.weight"] = q
            w[p + "self_attn.k_proj.weight"] = k
            w[p + "self_attn.v_proj.weight"] = v
        if fam == "qwen2":
            w[p + "self_attn.q_proj.bias"] = tensor(m, p + "qb", [nh * hd], 0.5)
            w[p + "self_attn.k_proj.bias"] = tensor(m, p + "kb", [nkv * hd], 0.5)
            w[p + "self_attn.v_proj.bias"] = tensor(m, p + "vb", [nkv * hd], 0.3)
        if qk_norm:
            w[p + "self_attn.q_norm.weight"] = norm_weight(m, p + "q_norm", hd, gemma, 1.3)
            w[p + "self_attn.k_norm.weight"] = norm_weight(m, p + "k_norm", hd, gemma, 1.3)
        w[p + "self_attn.o_proj.weight"] = linear(m, p + "o", H, nh * hd, branch)
        gate = linear(m, p + "gate", inter, H, 1.0)
        up = linear(m, p + "up", inter, H, 1.0)
        if arch == "Phi3ForCausalLM":
            w[p + "mlp.gate_up_proj.weight"] = np.concatenate([gate, up], axis=0)
        else:
            w[p + "mlp.gate_proj.weight"] = gate
            w[p + "mlp.up_proj.weight"] = up
        w[p + "mlp.down_proj.weight"] = linear(m, p + "down", H, inter, branch * 2.0)
        if gemma and arch != "GemmaForCausalLM":  # Gemma 2/3: four norms a layer
            w[p + "post_attention_layernorm.weight"] = norm_weight(m, p + "post_attn_norm", H, True)
            w[p + "pre_feedforward_layernorm.weight"] = norm_weight(m, p + "pre_ffn_norm", H, True)
            w[p + "post_feedforward_layernorm.weight"] = norm_weight(m, p + "post_ffn_norm", H, True)
        else:
            w[p + "post_attention_layernorm.weight"] = norm_weight(m, p + "post_attn_norm", H, gemma)

    # Logits: standard deviation about logit_std over the vocabulary, so the
    # top-two margin is typically well above one.
    # Under a soft cap c the margins shrink by sech^2(top/c): about 0.2 c is best.
    logit_std = 0.18 * cfg["final_logit_softcapping"] if cfg.get("final_logit_softcapping") else 14.0
    if tied:
        # logit = e . (g * h / rms(h)): its standard deviation is |e| * g, and
        # |e| = emb_rms * sqrt(H) for the stored (unscaled) embedding rows.
        gain = logit_std / (emb_rms * H ** 0.5)
    else:
        gain = 1.0
        w["lm_head.weight"] = tensor(m, "lm_head", [V, H], logit_std / H ** 0.5)
    w["model.norm.weight"] = norm_weight(m, "final_norm", H, gemma, gain, 0.1)
    return w


# ---------------------------------------------------------------- files


def write_safetensors(path, tensors):
    """Write f32 tensors in the safetensors format (sorted by name)."""
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    names = sorted(tensors)
    for n in names:
        t = tensors[n]
        assert t.dtype == np.float32
        nbytes = t.size * 4
        header[n] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((8 - len(hjson) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for n in names:
            f.write(np.ascontiguousarray(tensors[n], dtype="<f4").tobytes())


def q8_0_roundtrip(t):
    from gguf import GGMLQuantizationType, quants

    q = quants.quantize(t, GGMLQuantizationType.Q8_0)
    return quants.dequantize(q, GGMLQuantizationType.Q8_0).astype(np.float32).reshape(t.shape)


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def tokenizer_files(spec, data):
    tok = spec["tokenizer"]
    src = os.path.join(data, "hf-tokenizers", tok)
    with open(os.path.join(src, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    with open(os.path.join(src, "tokenizer_config.json"), encoding="utf-8") as f:
        tc = json.load(f)
    if tok == "llama3":
        # The packaged file lacks the BOS template that Meta's own tokenizer.json
        # has; put it back so every reader adds <|begin_of_text|>.
        bos = "<|begin_of_text|>"
        tj["post_processor"] = {"type": "Sequence", "processors": [
            tj["post_processor"],
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                      {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
             "special_tokens": {bos: {"id": bos, "ids": [128000], "tokens": [bos]}}},
        ]}
        tc["add_bos_token"] = True
    name = spec["name"]
    if name in CHAT_TEMPLATES:
        with open(os.path.join(data, "chat-templates", CHAT_TEMPLATES[name]), encoding="utf-8") as f:
            tc["chat_template"] = f.read()
    elif tok == "llama2":
        tc["chat_template"] = LLAMA2_TEMPLATE
    elif name == "qwen3" and "chat_template" not in tc:
        raise SystemExit("qwen3 tokenizer_config.json has no chat template")
    return tj, tc


def write_model(spec, outdir, data, q8):
    name = spec["name"] + ("-q8_0" if q8 else "")
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    weights = make_weights(spec)
    if q8:
        weights = {k: (q8_0_roundtrip(v) if v.ndim == 2 else v) for k, v in weights.items()}
    write_safetensors(os.path.join(d, "model.safetensors"), weights)
    write_json(os.path.join(d, "config.json"), spec["config"])
    tj, tc = tokenizer_files(spec, data)
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)
    write_json(os.path.join(d, "tokenizer_config.json"), tc)
    write_json(os.path.join(d, "cases.json"), {
        "name": name, "family": spec["family"], "weights": "q8_0" if q8 else "f32",
        "cases": spec["cases"]})
    n = sum(v.size for v in weights.values())
    print(f"{name}: {len(weights)} tensors, {n} parameters -> {d}")


def default_data_dir():
    env = os.environ.get("POOT_DATA_DIR")
    if env:
        return env
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, "..", "shared", "data")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="write only these models")
    ap.add_argument("--q8_0", action="store_true", help="also write <name>-q8_0 variants")
    ap.add_argument("--data", default=None, help="test data folder (default $POOT_DATA_DIR or ../shared/data)")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    args = ap.parse_args(argv)
    specs = model_specs()
    if args.list:
        print("\n".join(s["name"] for s in specs))
        return 0
    if not args.outdir:
        ap.error("OUTDIR is required")
    if args.only:
        known = {s["name"] for s in specs}
        bad = [n for n in args.only if n not in known]
        if bad:
            ap.error("unknown model(s): " + ", ".join(bad) + "; known: " + ", ".join(sorted(known)))
        specs = [s for s in specs if s["name"] in args.only]
    data = args.data or default_data_dir()
    if not os.path.isdir(os.path.join(data, "hf-tokenizers")):
        print(f"make_models: no hf-tokenizers in data folder {data}", file=sys.stderr)
        return 1
    for s in specs:
        write_model(s, args.outdir, data, False)
        if args.q8_0:
            write_model(s, args.outdir, data, True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
