#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_model_gguf and fuzz_model_folder: tiny,
valid models (a few KB each) of every family poot traces, with each
tokenizer kind, so that the fuzzers start from inputs that reach the
oracle step.

  python3 tests/fuzz/gen_model_seeds.py [--out tests/fuzz/corpus]

GGUF files are written with the `gguf` package (llama.cpp's writer);
safetensors files and the llama2.c formats by hand. A folder seed is the
container that tests/fuzz/model_open.c documents: b"PFZ1", then records of
(file number: u8, length: u32 little-endian, bytes). The output is the same
on every run (fixed random seed)."""

import argparse
import json
import os
import struct
import sys

import numpy as np

try:
    import gguf
except ImportError:  # the GGUF seeds need llama.cpp's package
    gguf = None

RNG = np.random.default_rng(23)

# Folder container file numbers (tests/fuzz/model_open.c).
F_CONFIG, F_TOKENIZER, F_SAFETENSORS, F_TOK_CONFIG, F_GEN_CONFIG, F_TEMPLATE, F_L2C, F_L2C_TOK = range(8)


def weights(shape):
    return (RNG.standard_normal(shape) * 0.5).astype(np.float32)


def ones(shape):
    return np.ones(shape, dtype=np.float32)


class Dims:
    def __init__(self, vocab=16, hidden=8, heads=2, kv_heads=1, head_dim=4, ff=16, layers=1):
        self.vocab, self.hidden, self.heads, self.kv_heads = vocab, hidden, heads, kv_heads
        self.head_dim, self.ff, self.layers = head_dim, ff, layers


def tensors(family, d, naming):
    """(name, array) of every weight the family reads, in `naming` ("gguf"/"hf")."""
    q, kv, H, F = d.heads * d.head_dim, d.kv_heads * d.head_dim, d.hidden, d.ff
    gemma = family in ("gemma2", "gemma3")
    tied = gemma or family == "qwen3"
    out = []
    g = naming == "gguf"
    out.append(("token_embd.weight" if g else "model.embed_tokens.weight", weights((d.vocab, H))))
    for L in range(d.layers):
        def n(gg, hf):
            return f"blk.{L}.{gg}" if g else f"model.layers.{L}.{hf}"
        out.append((n("attn_norm.weight", "input_layernorm.weight"), ones(H)))
        if family == "phi3":
            out.append((n("attn_qkv.weight", "self_attn.qkv_proj.weight"), weights((q + 2 * kv, H))))
        else:
            out.append((n("attn_q.weight", "self_attn.q_proj.weight"), weights((q, H))))
            out.append((n("attn_k.weight", "self_attn.k_proj.weight"), weights((kv, H))))
            out.append((n("attn_v.weight", "self_attn.v_proj.weight"), weights((kv, H))))
        if family == "qwen2":
            out.append((n("attn_q.bias", "self_attn.q_proj.bias"), weights(q)))
            out.append((n("attn_k.bias", "self_attn.k_proj.bias"), weights(kv)))
            out.append((n("attn_v.bias", "self_attn.v_proj.bias"), weights(kv)))
        if family in ("qwen3", "gemma3"):
            out.append((n("attn_q_norm.weight", "self_attn.q_norm.weight"), ones(d.head_dim)))
            out.append((n("attn_k_norm.weight", "self_attn.k_norm.weight"), ones(d.head_dim)))
        out.append((n("attn_output.weight", "self_attn.o_proj.weight"), weights((H, q))))
        if gemma:
            out.append((n("post_attention_norm.weight", "post_attention_layernorm.weight"), ones(H)))
            out.append((n("post_ffw_norm.weight", "post_feedforward_layernorm.weight"), ones(H)))
            out.append((n("ffn_norm.weight", "pre_feedforward_layernorm.weight"), ones(H)))
        else:
            out.append((n("ffn_norm.weight", "post_attention_layernorm.weight"), ones(H)))
        if family == "phi3":
            out.append((n("ffn_up.weight", "mlp.gate_up_proj.weight"), weights((2 * F, H))))
        else:
            out.append((n("ffn_gate.weight", "mlp.gate_proj.weight"), weights((F, H))))
            out.append((n("ffn_up.weight", "mlp.up_proj.weight"), weights((F, H))))
        out.append((n("ffn_down.weight", "mlp.down_proj.weight"), weights((H, F))))
    out.append(("output_norm.weight" if g else "model.norm.weight", ones(H)))
    if not tied:
        out.append(("output.weight" if g else "lm_head.weight", weights((d.vocab, H))))
    return out, tied


# ------------------------------------------------------------- vocabularies

SPM_TOKENS = ["<unk>", "<s>", "</s>", "<0x0A>", "\u2581", "a", "b", "e", "l", "o",
              "\u2581a", "ab", "\u2581ab", "he", "ll", "\u2581hello"]
BPE_TOKENS = ["H", "e", "l", "o", "\u0120", "w", "r", "d", "a", "b", "He", "ll", "llo",
              "\u0120w", "Hello", "<|endoftext|>"]
BPE_MERGES = ["H e", "l l", "ll o", "He llo", "\u0120 w"]
BERT_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s", "a", "b",
               "##a", "##b", "h", "##e", "##l", "##o"]


def gguf_tokenizer(w, kind, bos=1):
    if kind == "spm":
        w.add_string("tokenizer.ggml.model", "llama")
        w.add_array("tokenizer.ggml.tokens", SPM_TOKENS)
        w.add_array("tokenizer.ggml.scores", [0.0, 0.0, 0.0, 0.0] + [-float(i) for i in range(12)])
        w.add_array("tokenizer.ggml.token_type", [2, 3, 3, 6] + [1] * 12)
        w.add_uint32("tokenizer.ggml.bos_token_id", bos)
        w.add_uint32("tokenizer.ggml.eos_token_id", 2)
    elif kind == "bpe":
        w.add_string("tokenizer.ggml.model", "gpt2")
        w.add_string("tokenizer.ggml.pre", "qwen2")
        w.add_array("tokenizer.ggml.tokens", BPE_TOKENS)
        w.add_array("tokenizer.ggml.token_type", [1] * 15 + [3])
        w.add_array("tokenizer.ggml.merges", BPE_MERGES)
        w.add_uint32("tokenizer.ggml.eos_token_id", 15)
        w.add_string("tokenizer.chat_template",
                     "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}")
    else:
        w.add_string("tokenizer.ggml.model", "bert")
        w.add_array("tokenizer.ggml.tokens", ["\u2581" + t if not t.startswith("[") and not t.startswith("##") else t.replace("##", "") for t in BERT_TOKENS])
        w.add_array("tokenizer.ggml.token_type", [3, 2, 3, 3, 3] + [1] * 11)
        w.add_uint32("tokenizer.ggml.cls_token_id", 2)
        w.add_uint32("tokenizer.ggml.seperator_token_id", 3)
        w.add_uint32("tokenizer.ggml.unknown_token_id", 1)


def write_gguf(path, family, d, tok_kind, qtype=None, bos=1):
    w = gguf.GGUFWriter(path, family)
    arch = family
    w.add_uint32(f"{arch}.context_length", 64)
    w.add_uint32(f"{arch}.embedding_length", d.hidden)
    w.add_uint32(f"{arch}.feed_forward_length", d.ff)
    w.add_uint32(f"{arch}.block_count", d.layers)
    w.add_uint32(f"{arch}.attention.head_count", d.heads)
    w.add_uint32(f"{arch}.attention.head_count_kv", d.kv_heads)
    w.add_uint32(f"{arch}.attention.key_length", d.head_dim)
    w.add_uint32(f"{arch}.attention.value_length", d.head_dim)
    w.add_uint32(f"{arch}.rope.dimension_count", d.head_dim)
    w.add_float32(f"{arch}.attention.layer_norm_rms_epsilon", 1e-5)
    w.add_float32(f"{arch}.rope.freq_base", 10000.0)
    if family == "gemma2":
        w.add_float32(f"{arch}.attn_logit_softcapping", 50.0)
        w.add_float32(f"{arch}.final_logit_softcapping", 30.0)
        w.add_uint32(f"{arch}.attention.sliding_window", 4)
    gguf_tokenizer(w, tok_kind, bos)
    ts, _ = tensors(family, d, "gguf")
    for name, a in ts:
        if a.ndim == 2 and qtype == "f16":
            w.add_tensor(name, a.astype(np.float16))
        elif a.ndim == 2 and qtype == "q8_0" and a.shape[1] % 32 == 0:
            q = gguf.quants.quantize(a, gguf.GGMLQuantizationType.Q8_0)
            w.add_tensor(name, q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            w.add_tensor(name, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# ------------------------------------------------------------- safetensors

def safetensors_bytes(ts, dtype="F32"):
    header, blobs, off = {}, [], 0
    for name, a in ts:
        if dtype == "F16":
            b = a.astype(np.float16).tobytes()
        elif dtype == "BF16":
            b = (a.view(np.uint32) >> 16).astype(np.uint16).tobytes()
        else:
            b = a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


HF_ARCH = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM",
           "qwen3": "Qwen3ForCausalLM", "gemma3": "Gemma3ForCausalLM", "phi3": "Phi3ForCausalLM"}


def hf_config(family, d, tied):
    c = {"architectures": [HF_ARCH[family]], "hidden_size": d.hidden, "intermediate_size": d.ff,
         "num_hidden_layers": d.layers, "num_attention_heads": d.heads,
         "num_key_value_heads": d.kv_heads, "head_dim": d.head_dim, "vocab_size": d.vocab,
         "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "max_position_embeddings": 64,
         "tie_word_embeddings": tied, "bos_token_id": 1, "eos_token_id": [2]}
    if family == "gemma3":
        c.update({"model_type": "gemma3_text", "query_pre_attn_scalar": d.head_dim,
                  "sliding_window": 4, "sliding_window_pattern": 2,
                  "rope_local_base_freq": 10000.0, "hidden_activation": "gelu_pytorch_tanh"})
    if family == "mistral":
        c["sliding_window"] = 4
    return json.dumps(c).encode()


def hf_tokenizer(kind):
    if kind == "unigram":
        vocab = [["<unk>", 0.0], ["<s>", 0.0], ["</s>", 0.0]] + \
                [[p, -1.0 - i] for i, p in enumerate(SPM_TOKENS[4:])] + [["x", -20.0]]
        t = {"added_tokens": [{"id": 0, "content": "<unk>", "special": True},
                              {"id": 1, "content": "<s>", "special": True},
                              {"id": 2, "content": "</s>", "special": True}],
             "normalizer": {"type": "NFKC"},
             "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                               "prepend_scheme": "always", "split": True},
             "post_processor": {"type": "TemplateProcessing",
                                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                           {"Sequence": {"id": "A", "type_id": 0}}]},
             "model": {"type": "Unigram", "unk_id": 0, "vocab": vocab[:16]}}
    elif kind == "bpe":
        t = {"added_tokens": [{"id": 15, "content": "<|endoftext|>", "special": True}],
             "normalizer": None,
             "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
             "model": {"type": "BPE", "vocab": {s: i for i, s in enumerate(BPE_TOKENS)},
                       "merges": BPE_MERGES}}
    else:
        t = {"added_tokens": [{"id": i, "content": BERT_TOKENS[i], "special": True} for i in range(5)],
             "normalizer": {"type": "BertNormalizer", "lowercase": True},
             "pre_tokenizer": {"type": "BertPreTokenizer"},
             "post_processor": {"type": "BertProcessing", "cls": ["[CLS]", 2], "sep": ["[SEP]", 3]},
             "model": {"type": "WordPiece", "unk_token": "[UNK]",
                       "vocab": {s: i for i, s in enumerate(BERT_TOKENS)}}}
    return json.dumps(t).encode()


def container(files):
    out = bytearray(b"PFZ1")
    for num, data in files:
        out += struct.pack("<BI", num, len(data)) + data
    return bytes(out)


def hf_seed(family, d, tok_kind, dtype="F32"):
    ts, tied = tensors(family, d, "hf")
    files = [(F_CONFIG, hf_config(family, d, tied)), (F_TOKENIZER, hf_tokenizer(tok_kind)),
             (F_SAFETENSORS, safetensors_bytes(ts, dtype))]
    if family == "qwen2":
        files.append((F_TOK_CONFIG, json.dumps({
            "chat_template": "{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}",
            "add_bos_token": False}).encode()))
        files.append((F_GEN_CONFIG, json.dumps({"eos_token_id": [15, 2]}).encode()))
    if family == "llama":
        files.append((F_TEMPLATE, b"{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"))
    return container(files)


def llama2c_seed(d, shared=True):
    hs = d.hidden // d.heads
    L, H, F, V, kv = d.layers, d.hidden, d.ff, d.vocab, d.kv_heads * hs
    seq = 4
    head = struct.pack("<7i", H, F, L, d.heads, d.kv_heads, V if shared else -V, seq)
    parts = [weights((V, H)), ones((L, H)), weights((L, H, H)), weights((L, kv, H)),
             weights((L, kv, H)), weights((L, H, H)), ones((L, H)), weights((L, F, H)),
             weights((L, H, F)), weights((L, F, H)), ones(H), np.zeros((seq, hs // 2), np.float32),
             np.zeros((seq, hs // 2), np.float32)]
    if not shared:
        parts.append(weights((V, H)))
    model = head + b"".join(p.astype(np.float32).tobytes() for p in parts)
    toks = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % i for i in range(4)] + \
           [b" ", b"a", b"b", b"e", b" a", b"ab", b" ab", b"he", b" he"]
    tok = struct.pack("<i", max(len(t) for t in toks))
    for i, t in enumerate(toks[:V]):
        tok += struct.pack("<fi", 0.0 if i < 7 else -float(i), len(t)) + t
    return container([(F_L2C, model), (F_L2C_TOK, tok)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
    a = ap.parse_args()
    gdir, fdir = os.path.join(a.out, "model_gguf"), os.path.join(a.out, "model_folder")
    os.makedirs(gdir, exist_ok=True)
    os.makedirs(fdir, exist_ok=True)
    small = Dims()
    if gguf is None:
        print("gen_model_seeds: the gguf package is missing; GGUF seeds skipped", file=sys.stderr)
    else:
        write_gguf(os.path.join(gdir, "llama-spm-f32.gguf"), "llama", small, "spm")
        write_gguf(os.path.join(gdir, "qwen2-bpe-f16.gguf"), "qwen2", small, "bpe", "f16")
        write_gguf(os.path.join(gdir, "qwen3-bert-f32.gguf"), "qwen3", small, "bert")
        write_gguf(os.path.join(gdir, "gemma2-spm-f16.gguf"), "gemma2", small, "spm", "f16")
        write_gguf(os.path.join(gdir, "phi3-bpe-f32.gguf"), "phi3", Dims(kv_heads=2), "bpe")
        write_gguf(os.path.join(gdir, "llama-bpe-q8_0.gguf"), "llama",
                   Dims(hidden=32, heads=4, kv_heads=2, head_dim=8, ff=32), "bpe", "q8_0")
    seeds = {
        "llama-unigram-f32.pfz": hf_seed("llama", small, "unigram"),
        "qwen2-bpe-bf16.pfz": hf_seed("qwen2", small, "bpe", "BF16"),
        "qwen3-wordpiece-f16.pfz": hf_seed("qwen3", small, "wordpiece", "F16"),
        "gemma3-unigram-f32.pfz": hf_seed("gemma3", Dims(layers=2), "unigram"),
        "phi3-bpe-f32.pfz": hf_seed("phi3", Dims(kv_heads=2), "bpe"),
        "mistral-bpe-f32.pfz": hf_seed("mistral", small, "bpe"),
        "llama2c-shared.pfz": llama2c_seed(small, True),
        "llama2c-separate.pfz": llama2c_seed(small, False),
    }
    for name, data in seeds.items():
        with open(os.path.join(fdir, name), "wb") as f:
            f.write(data)
    if gguf is not None:
        # 16 tokens over an 8-row embedding, BOS 12: the oracle step must fault.
        # (Written last, so the other seeds' random weights stay as they were.)
        write_gguf(os.path.join(gdir, "llama-bos-past-embedding.gguf"), "llama", Dims(vocab=8),
                   "spm", bos=12)


if __name__ == "__main__":
    main()
