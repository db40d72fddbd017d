#!/usr/bin/env python3
"""Reference checks of `poot convert` and `poot inspect` against the Python
`gguf` package (and numpy / safetensors).

  formats_convert.py llama2c      stories260K to every --type: loads in gguf,
                                  tensors bit-identical to numpy conversion
                                  (f32/f16/bf16) or to gguf's quantize
  formats_convert.py safetensors  a small random llama written with the
                                  safetensors numpy API (sharded, with the
                                  llama3 tokenizer.json) converted and compared
  formats_convert.py tokenizers   Qwen 3 and Llama 2 tokenizer.json conversions
  formats_convert.py gguf         GGUF to GGUF: the identity without --type
                                  (every vocabulary file byte for byte),
                                  exact re-typing with it
  formats_convert.py vocab        `poot inspect --json` of every vocabulary
                                  GGUF equals gguf.GGUFReader's view

Environment: POOT (the poot binary), POOT_DATA_DIR. Exit 77 = skipped.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

SKIP = 77

try:
    import numpy as np
    import gguf
    from gguf import quants
except ImportError as e:  # pragma: no cover
    print(f"SKIP: {e}")
    sys.exit(SKIP)

POOT = os.environ.get("POOT")
DATA = os.environ.get("POOT_DATA_DIR", "")
Q = gguf.GGMLQuantizationType
TYPES = {"f32": Q.F32, "f16": Q.F16, "bf16": Q.BF16, "q8_0": Q.Q8_0, "q4_0": Q.Q4_0,
         "q4_1": Q.Q4_1, "q5_0": Q.Q5_0, "q5_1": Q.Q5_1}
FILE_TYPE = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q8_0": 7, "q5_0": 8, "q5_1": 9, "bf16": 32}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    r = subprocess.run([POOT, *args], capture_output=True)
    if r.returncode != 0:
        print(r.stderr.decode(errors="replace"))
        raise SystemExit(f"poot {' '.join(args)} exited {r.returncode}")
    return r.stdout


def run_input(text, *args):
    r = subprocess.run([POOT, *args], input=text.encode(), capture_output=True)
    if r.returncode != 0:
        print(r.stderr.decode(errors="replace"))
        raise SystemExit(f"poot {' '.join(args)} exited {r.returncode}")
    return r.stdout


def field(reader, key):
    f = reader.fields.get(key)
    if f is None:
        return None
    return f.contents()


class FastGGUF:
    """A small GGUF parser (metadata as Python values, tensors as raw bytes)
    for the repeated checks; GGUFReader parses 400k-string vocabularies
    slowly. Each test also loads one output with GGUFReader itself."""

    SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
               10: "<Q", 11: "<q", 12: "<d"}

    def __init__(self, path):
        self.buf = open(path, "rb").read()
        self.pos = 0
        magic, version, n_tensors, n_kv = struct.unpack_from("<IIQQ", self.buf, 0)
        assert magic == 0x46554747 and version in (2, 3)
        self.pos = 24
        self.fields = {}
        for _ in range(n_kv):
            key = self._str()
            (vtype,) = self._unpack("<I")
            self.fields[key] = self._value(vtype)
        self.tensors = {}
        for _ in range(n_tensors):
            name = self._str()
            (nd,) = self._unpack("<I")
            dims = list(self._unpack(f"<{nd}Q"))
            ttype, off = self._unpack("<IQ")
            self.tensors[name] = (Q(ttype), dims, off)
        align = self.fields.get("general.alignment", 32)
        self.data_offset = (self.pos + align - 1) // align * align

    def _unpack(self, fmt):
        v = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def _str(self):
        (n,) = self._unpack("<Q")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b.decode("utf-8")

    def _value(self, vtype):
        if vtype == 8:
            return self._str()
        if vtype == 9:
            etype, n = self._unpack("<IQ")
            if etype in self.SCALARS:
                fmt = self.SCALARS[etype]
                v = list(struct.unpack_from(f"<{n}{fmt[1]}", self.buf, self.pos))
                self.pos += struct.calcsize(fmt) * n
                return v
            return [self._value(etype) for _ in range(n)]
        return self._unpack(self.SCALARS[vtype])[0]

    def tensor_bytes(self, name):
        ttype, dims, off = self.tensors[name]
        block, size = gguf.GGML_QUANT_SIZES[ttype]
        n = int(np.prod(dims))
        start = self.data_offset + off
        return self.buf[start:start + n // block * size]


def expected_bytes(src, qtype):
    """What a tensor's bytes must be for source f32 data and a target type."""
    src = np.ascontiguousarray(src, dtype=np.float32)
    if src.ndim == 1:
        qtype = Q.F32
    elif qtype not in (Q.F32, Q.F16, Q.BF16) and src.shape[-1] % 32:
        qtype = Q.F16  # llama.cpp's fallback when the block size does not divide a row
    if qtype == Q.F32:
        return qtype, src.tobytes()
    if qtype == Q.F16:
        return qtype, src.astype(np.float16).tobytes()
    return qtype, quants.quantize(src, qtype).tobytes()


def compare_tensor(reader_tensors, name, src, qtype, label):
    """reader_tensors: {name: ReaderTensor} from GGUFReader, or a FastGGUF."""
    want_type, want = expected_bytes(src, qtype)
    if isinstance(reader_tensors, FastGGUF):
        t = reader_tensors.tensors.get(name)
        check(t is not None, f"{label}: tensor {name} missing")
        if t is None:
            return
        ttype, ne, got = t[0], t[1], reader_tensors.tensor_bytes(name)
    else:
        t = reader_tensors.get(name)
        check(t is not None, f"{label}: tensor {name} missing")
        if t is None:
            return
        ttype, ne, got = t.tensor_type, list(t.shape), np.asarray(t.data).tobytes()
    check(ttype == want_type, f"{label}: {name} type {ttype!r} != {want_type!r}")
    check(list(ne) == list(reversed(src.shape)),
          f"{label}: {name} ne {list(ne)} != {list(reversed(src.shape))}")
    check(got == want, f"{label}: {name} bytes differ ({len(got)} vs {len(want)})")


# ------------------------------------------------------------------ llama2.c

def read_llama2c(path):
    raw = open(path, "rb").read()
    dim, hid, L, nh, nkv, V, S = struct.unpack("<7i", raw[:28])
    shared = V > 0
    V = abs(V)
    f = np.frombuffer(raw[28:], dtype=np.float32)
    hs = dim // nh
    kv = hs * nkv
    off = 0

    def take(*shape):
        nonlocal off
        n = int(np.prod(shape))
        a = f[off:off + n].reshape(shape)
        off += n
        return a

    w = {"tok": take(V, dim), "att_norm": take(L, dim), "wq": take(L, dim, dim),
         "wk": take(L, kv, dim), "wv": take(L, kv, dim), "wo": take(L, dim, dim),
         "ffn_norm": take(L, dim), "w1": take(L, hid, dim), "w2": take(L, dim, hid),
         "w3": take(L, hid, dim), "norm": take(dim)}
    take(S, hs)  # freq_cis real and imaginary
    w["out"] = w["tok"] if shared else take(V, dim)
    check(off == f.size, "llama2.c reader consumed the whole file")
    return dict(dim=dim, hid=hid, L=L, nh=nh, nkv=nkv, V=V, S=S, shared=shared), w


def read_llama2c_vocab(path, n):
    raw = open(path, "rb").read()
    pos = 4
    toks, scores = [], []
    for _ in range(n):
        score, ln = struct.unpack("<fi", raw[pos:pos + 8])
        pos += 8
        toks.append(raw[pos:pos + ln])
        scores.append(score)
        pos += ln
    return toks, scores


def test_llama2c(*_):
    model = os.path.join(DATA, "models/stories260K/stories260K.bin")
    tok = os.path.join(DATA, "models/stories260K/tok512.bin")
    if not (os.path.exists(model) and os.path.exists(tok)):
        print("SKIP: stories260K is absent")
        return SKIP
    cfg, w = read_llama2c(model)
    check(cfg == dict(dim=64, hid=172, L=5, nh=8, nkv=4, V=512, S=512, shared=True),
          f"stories260K config {cfg}")
    toks, scores = read_llama2c_vocab(tok, cfg["V"])
    tmp = tempfile.mkdtemp(prefix="poot-convert-")
    try:
        for tname, qtype in TYPES.items():
            out = os.path.join(tmp, f"stories-{tname}.gguf")
            run("convert", model, out, "--tokenizer", tok, "--type", tname)
            r = gguf.GGUFReader(out)
            label = f"llama2c/{tname}"
            check(field(r, "general.architecture") == "llama", f"{label}: architecture")
            for key, want in [("llama.context_length", 512), ("llama.embedding_length", 64),
                              ("llama.block_count", 5), ("llama.feed_forward_length", 172),
                              ("llama.attention.head_count", 8),
                              ("llama.attention.head_count_kv", 4),
                              ("llama.rope.dimension_count", 8),
                              ("general.file_type", FILE_TYPE[tname]),
                              ("tokenizer.ggml.bos_token_id", 1),
                              ("tokenizer.ggml.eos_token_id", 2),
                              ("tokenizer.ggml.unknown_token_id", 0)]:
                check(field(r, key) == want, f"{label}: {key} = {field(r, key)} != {want}")
            check(abs(field(r, "llama.attention.layer_norm_rms_epsilon") - 1e-5) < 1e-12,
                  f"{label}: rms eps")
            check(field(r, "tokenizer.ggml.model") == "llama", f"{label}: tokenizer model")
            want_toks = ["<unk>", "<s>", "</s>"] + [
                t.decode("utf-8").replace(" ", "\u2581") for t in toks[3:]]
            check(field(r, "tokenizer.ggml.tokens") == want_toks, f"{label}: tokens")
            check(np.array_equal(np.array(field(r, "tokenizer.ggml.scores"), dtype=np.float32),
                                 np.array(scores, dtype=np.float32)), f"{label}: scores")
            types = field(r, "tokenizer.ggml.token_type")
            want_types = [2, 3, 3] + [6 if (len(t) == 6 and t.startswith(b"<0x")) else 1
                                      for t in toks[3:]]
            check(types == want_types, f"{label}: token types")
            tensors = {t.name: t for t in r.tensors}
            check(len(tensors) == 3 + 9 * 5, f"{label}: {len(tensors)} tensors")
            compare_tensor(tensors, "token_embd.weight", w["tok"], qtype, label)
            compare_tensor(tensors, "output.weight", w["out"], qtype, label)
            compare_tensor(tensors, "output_norm.weight", w["norm"], qtype, label)
            for l in range(5):
                for gname, key in [("attn_norm", "att_norm"), ("attn_q", "wq"), ("attn_k", "wk"),
                                   ("attn_v", "wv"), ("attn_output", "wo"),
                                   ("ffn_norm", "ffn_norm"), ("ffn_gate", "w1"),
                                   ("ffn_down", "w2"), ("ffn_up", "w3")]:
                    compare_tensor(tensors, f"blk.{l}.{gname}.weight", w[key][l], qtype, label)
            # Data offsets are aligned as GGUF requires.
            for t in r.tensors:
                check(t.data_offset % 32 == 0, f"{label}: {t.name} data offset alignment")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


# ---------------------------------------------------------------- safetensors

def hf_permute(w, n_head):
    """llama.cpp's LlamaModel.permute."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def test_safetensors(*_):
    try:
        from safetensors.numpy import save_file
    except ImportError as e:
        print(f"SKIP: {e}")
        return SKIP
    tok_dir = os.path.join(DATA, "hf-tokenizers/llama3")
    vocab_gguf = os.path.join(DATA, "vocab/ggml-vocab-llama-bpe.gguf")
    if not os.path.exists(os.path.join(tok_dir, "tokenizer.json")):
        print("SKIP: the llama3 tokenizer.json is absent")
        return SKIP
    rng = np.random.default_rng(1234)
    V, D, L, NH, NKV, HID = 128256, 16, 2, 4, 2, 40
    HD = D // NH
    tmp = tempfile.mkdtemp(prefix="poot-st-")
    try:
        model = os.path.join(tmp, "tiny-llama")
        os.mkdir(model)
        w = {}

        def rand(*shape, dtype=np.float32):
            return (rng.standard_normal(shape) * 0.5).astype(dtype)

        # f16 and f32 sources mixed: the embedding and one projection are f16.
        w["model.embed_tokens.weight"] = rand(V, D, dtype=np.float16)
        w["model.norm.weight"] = rand(D)
        w["lm_head.weight"] = rand(V, D)
        for l in range(L):
            p = f"model.layers.{l}."
            w[p + "input_layernorm.weight"] = rand(D)
            w[p + "post_attention_layernorm.weight"] = rand(D)
            w[p + "self_attn.q_proj.weight"] = rand(NH * HD, D)
            w[p + "self_attn.k_proj.weight"] = rand(NKV * HD, D)
            w[p + "self_attn.v_proj.weight"] = rand(NKV * HD, D)
            w[p + "self_attn.o_proj.weight"] = rand(D, NH * HD)
            w[p + "mlp.gate_proj.weight"] = rand(HID, D)
            w[p + "mlp.up_proj.weight"] = rand(HID, D, dtype=np.float16 if l == 1 else np.float32)
            w[p + "mlp.down_proj.weight"] = rand(D, HID)
        # Two shards and an index, as big checkpoints come.
        names = sorted(w)
        shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
                  "model-00002-of-00002.safetensors": names[len(names) // 2:]}
        index = {"metadata": {"total_size": int(sum(a.nbytes for a in w.values()))},
                 "weight_map": {}}
        for fname, keys in shards.items():
            save_file({k: w[k] for k in keys}, os.path.join(model, fname))
            for k in keys:
                index["weight_map"][k] = fname
        json.dump(index, open(os.path.join(model, "model.safetensors.index.json"), "w"))
        config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                  "hidden_size": D, "intermediate_size": HID, "num_hidden_layers": L,
                  "num_attention_heads": NH, "num_key_value_heads": NKV,
                  "max_position_embeddings": 2048, "rms_norm_eps": 1e-5,
                  "rope_theta": 500000.0, "vocab_size": V, "tie_word_embeddings": False,
                  "bos_token_id": 128000, "eos_token_id": 128001, "torch_dtype": "float32"}
        json.dump(config, open(os.path.join(model, "config.json"), "w"))
        # Llama 3's end ids: <|end_of_text|>, <|eot_id|> (the extra one becomes
        # tokenizer.ggml.eot_token_id).
        json.dump({"bos_token_id": 128000, "eos_token_id": [128001, 128009]},
                  open(os.path.join(model, "generation_config.json"), "w"))
        shutil.copy(os.path.join(tok_dir, "tokenizer.json"), model)
        tok_config = json.load(open(os.path.join(tok_dir, "tokenizer_config.json")))
        shutil.copy(os.path.join(tok_dir, "tokenizer_config.json"), model)

        # inspect sees the folder.
        info = json.loads(run("inspect", model, "--json"))
        check(info["format"] == "safetensors", "inspect: format")
        check(info["architecture"] == "llama", "inspect: architecture")
        check(len(info["tensors"]) == len(w), "inspect: tensor count")
        check(info["chat_template"] is True, "inspect: chat template")
        emb = [t for t in info["tensors"] if t["name"] == "model.embed_tokens.weight"][0]
        check(emb["shape"] == [V, D] and emb["type"] == "F16", f"inspect: embedding {emb}")

        ref = FastGGUF(vocab_gguf) if os.path.exists(vocab_gguf) else None
        for tname in ["f32", "f16", "bf16", "q8_0", "q4_1"]:
            out = os.path.join(tmp, f"tiny-{tname}.gguf")
            run("convert", model, out, "--type", tname)
            fast = FastGGUF(out)
            label = f"safetensors/{tname}"
            if tname == "f32":
                # The output loads in the gguf package, which sees what FastGGUF sees.
                r = gguf.GGUFReader(out)
                for key in ["tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                            "tokenizer.ggml.token_type", "general.architecture"]:
                    check(field(r, key) == fast.fields[key], f"{label}: GGUFReader {key}")
                check(sorted(t.name for t in r.tensors) == sorted(fast.tensors),
                      f"{label}: GGUFReader tensor names")
                for t in r.tensors:
                    check(np.asarray(t.data).tobytes() == fast.tensor_bytes(t.name),
                          f"{label}: GGUFReader bytes of {t.name}")
            for key, want in [("general.architecture", "llama"), ("general.name", "tiny-llama"),
                              ("llama.block_count", L), ("llama.context_length", 2048),
                              ("llama.embedding_length", D), ("llama.feed_forward_length", HID),
                              ("llama.attention.head_count", NH),
                              ("llama.attention.head_count_kv", NKV),
                              ("llama.rope.dimension_count", HD), ("llama.vocab_size", V),
                              ("general.file_type", FILE_TYPE[tname]),
                              ("tokenizer.ggml.model", "gpt2"),
                              ("tokenizer.ggml.pre", "llama-bpe"),
                              ("tokenizer.ggml.bos_token_id", 128000),
                              ("tokenizer.ggml.eos_token_id", 128001),
                              ("tokenizer.ggml.eot_token_id", 128009),
                              ("tokenizer.ggml.eom_token_id", None),
                              ("tokenizer.chat_template", tok_config["chat_template"])]:
                got = fast.fields.get(key)
                check(got == want, f"{label}: {key} = {str(got)[:80]} != {str(want)[:80]}")
            check(np.float32(fast.fields["llama.rope.freq_base"]) == np.float32(500000.0),
                  f"{label}: rope freq base")
            check(np.float32(fast.fields["llama.attention.layer_norm_rms_epsilon"]) ==
                  np.float32(1e-5), f"{label}: rms eps")
            if ref is not None:
                # The vocabulary is written as llama.cpp wrote ggml-vocab-llama-bpe.gguf.
                for key in ["tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
                            "tokenizer.ggml.merges"]:
                    check(fast.fields[key] == ref.fields[key],
                          f"{label}: {key} differs from ggml-vocab-llama-bpe.gguf")
            tensors = fast
            check(len(fast.tensors) == len(w), f"{label}: {len(fast.tensors)} tensors")
            qtype = TYPES[tname]
            compare_tensor(tensors, "token_embd.weight", w["model.embed_tokens.weight"], qtype,
                           label)
            compare_tensor(tensors, "output.weight", w["lm_head.weight"], qtype, label)
            compare_tensor(tensors, "output_norm.weight", w["model.norm.weight"], qtype, label)
            for l in range(L):
                p = f"model.layers.{l}."
                g = f"blk.{l}."
                compare_tensor(tensors, g + "attn_q.weight",
                               hf_permute(w[p + "self_attn.q_proj.weight"], NH), qtype, label)
                compare_tensor(tensors, g + "attn_k.weight",
                               hf_permute(w[p + "self_attn.k_proj.weight"], NKV), qtype, label)
                for gname, hname in [("attn_norm", "input_layernorm"),
                                     ("ffn_norm", "post_attention_layernorm"),
                                     ("attn_v", "self_attn.v_proj"),
                                     ("attn_output", "self_attn.o_proj"),
                                     ("ffn_gate", "mlp.gate_proj"), ("ffn_up", "mlp.up_proj"),
                                     ("ffn_down", "mlp.down_proj")]:
                    compare_tensor(tensors, g + gname + ".weight", w[p + hname + ".weight"],
                                   qtype, label)
        # Without --type a mixed f16/f32 source is written as f32 (lossless).
        out = os.path.join(tmp, "tiny-default.gguf")
        run("convert", model, out)
        check(FastGGUF(out).fields["general.file_type"] == 0, "default type: file_type f32")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


# ---------------------------------------------------------------------- vocab

def py_value(f):
    """A gguf ReaderField as the JSON poot inspect writes."""
    return f.contents()


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return np.float64(a) == np.float64(b) or (np.isnan(a) and np.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


VT = gguf.GGUFValueType
TYPE_NAMES = {VT.UINT8: "u8", VT.INT8: "i8", VT.UINT16: "u16", VT.INT16: "i16",
              VT.UINT32: "u32", VT.INT32: "i32", VT.FLOAT32: "f32", VT.BOOL: "bool",
              VT.STRING: "string", VT.ARRAY: "array", VT.UINT64: "u64", VT.INT64: "i64",
              VT.FLOAT64: "f64"}


def test_vocab(only=None):
    vdir = os.path.join(DATA, "vocab")
    files = sorted(f for f in os.listdir(vdir) if f.endswith(".gguf")) if os.path.isdir(vdir) else []
    if only:
        files = [f for f in files if only in f]
    if not files:
        print("SKIP: no vocabulary GGUF files")
        return SKIP
    for name in files:
        path = os.path.join(vdir, name)
        r = gguf.GGUFReader(path)
        info = json.loads(run("inspect", path, "--json"))
        check(info["format"] == "gguf", f"{name}: format")
        check(info["gguf"]["version"] == field(r, "GGUF.version"), f"{name}: version")
        meta = info["metadata"]
        keys = [k for k in r.fields if not k.startswith("GGUF.")]
        check(list(meta) == keys, f"{name}: keys {list(meta)[:3]}… != {keys[:3]}…")
        for k in keys:
            f = r.fields[k]
            m = meta.get(k)
            if m is None:
                continue
            check(m["type"] == TYPE_NAMES[f.types[0]], f"{name}: {k} type {m['type']}")
            if f.types[0] == VT.ARRAY:
                check(m["elem_type"] == TYPE_NAMES[f.types[1]], f"{name}: {k} element type")
            want = py_value(f)
            if isinstance(want, float):
                want = float(np.float32(want)) if f.types[0] == VT.FLOAT32 else want
                got = m["value"]
                check(np.float32(got) == np.float32(want), f"{name}: {k} = {got} != {want}")
            elif isinstance(want, list) and want and isinstance(want[0], float):
                check(np.array_equal(np.array(m["value"], dtype=np.float32),
                                     np.array(want, dtype=np.float32)), f"{name}: {k} floats")
            else:
                check(same(m["value"], want), f"{name}: {k} value differs")
        tok = info["tokenizer"]
        check(tok["model"] == field(r, "tokenizer.ggml.model"), f"{name}: tokenizer model")
        check(tok["tokens"] == len(field(r, "tokenizer.ggml.tokens")), f"{name}: token count")
        check(info["chat_template"] == ("tokenizer.chat_template" in r.fields),
              f"{name}: chat template presence")
        check(info["tensors"] == [], f"{name}: no tensors")
        print(f"{name}: {len(keys)} keys, {tok['tokens']} tokens match")
    return 0


# ------------------------------------------------------------------ tokenizers

def tiny_model(folder, config, tok_name, n_layers, qk_norm=False, bias=False):
    """A random model in `folder` with the named tokenizer copied in."""
    from safetensors.numpy import save_file
    rng = np.random.default_rng(7)
    V, D, HID = config["vocab_size"], config["hidden_size"], config["intermediate_size"]
    NH, NKV = config["num_attention_heads"], config["num_key_value_heads"]
    HD = config.get("head_dim", D // NH)
    r = lambda *s: rng.standard_normal(s).astype(np.float32)
    w = {"model.embed_tokens.weight": r(V, D), "model.norm.weight": r(D)}
    for l in range(n_layers):
        p = f"model.layers.{l}."
        w.update({p + "input_layernorm.weight": r(D), p + "post_attention_layernorm.weight": r(D),
                  p + "self_attn.q_proj.weight": r(NH * HD, D),
                  p + "self_attn.k_proj.weight": r(NKV * HD, D),
                  p + "self_attn.v_proj.weight": r(NKV * HD, D),
                  p + "self_attn.o_proj.weight": r(D, NH * HD),
                  p + "mlp.gate_proj.weight": r(HID, D), p + "mlp.up_proj.weight": r(HID, D),
                  p + "mlp.down_proj.weight": r(D, HID)})
        if bias:
            w[p + "self_attn.q_proj.bias"] = r(NH * HD)
            w[p + "self_attn.k_proj.bias"] = r(NKV * HD)
            w[p + "self_attn.v_proj.bias"] = r(NKV * HD)
            w[p + "self_attn.o_proj.bias"] = r(D)
        if qk_norm:
            w[p + "self_attn.q_norm.weight"] = r(HD)
            w[p + "self_attn.k_norm.weight"] = r(HD)
    os.mkdir(folder)
    save_file(w, os.path.join(folder, "model.safetensors"))
    json.dump(config, open(os.path.join(folder, "config.json"), "w"))
    src = os.path.join(DATA, "hf-tokenizers", tok_name)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(src, f), folder)
    return w


def test_tokenizers(*_):
    """tokenizer.json kinds: Qwen 3's byte-level BPE (merges as pairs, added
    tokens) and Llama 2's SentencePiece-style BPE (byte fallback)."""
    hf = os.path.join(DATA, "hf-tokenizers")
    qwen_ref = os.path.join(DATA, "vocab/ggml-vocab-qwen2.gguf")
    if not (os.path.isdir(os.path.join(hf, "qwen3")) and os.path.isdir(os.path.join(hf, "llama2"))
            and os.path.exists(qwen_ref)):
        print("SKIP: tokenizer data is absent")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="poot-tok-")
    try:
        # Qwen 3: no permutation, q/k norms, head_dim in config.
        cfg = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "vocab_size": 151936,
               "hidden_size": 8, "intermediate_size": 32, "num_hidden_layers": 1,
               "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4,
               "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
               "tie_word_embeddings": True, "bos_token_id": 151643, "eos_token_id": 151645}
        folder = os.path.join(tmp, "qwen3-tiny")
        w = tiny_model(folder, cfg, "qwen3", 1, qk_norm=True)
        out = os.path.join(tmp, "qwen3.gguf")
        run("convert", folder, out)
        g = FastGGUF(out)
        ref = FastGGUF(qwen_ref)
        tj = json.load(open(os.path.join(hf, "qwen3/tokenizer.json")))
        tc = json.load(open(os.path.join(hf, "qwen3/tokenizer_config.json")))
        f = g.fields
        for key, want in [("general.architecture", "qwen3"), ("qwen3.block_count", 1),
                          ("qwen3.attention.key_length", 4), ("qwen3.attention.value_length", 4),
                          ("qwen3.rope.dimension_count", 4), ("qwen3.vocab_size", 151936),
                          ("tokenizer.ggml.model", "gpt2"), ("tokenizer.ggml.pre", "qwen2"),
                          ("tokenizer.ggml.eos_token_id", 151645),
                          ("tokenizer.ggml.padding_token_id", 151643),
                          ("tokenizer.ggml.bos_token_id", 151643),
                          ("tokenizer.ggml.add_bos_token", False),
                          ("tokenizer.chat_template", tc["chat_template"])]:
            check(f.get(key) == want, f"qwen3: {key} = {str(f.get(key))[:60]} != {str(want)[:60]}")
        toks, types = f["tokenizer.ggml.tokens"], f["tokenizer.ggml.token_type"]
        check(len(toks) == 151936, "qwen3: token count")
        check(toks[:151643] == ref.fields["tokenizer.ggml.tokens"][:151643],
              "qwen3: base vocabulary equals ggml-vocab-qwen2.gguf")
        check(f["tokenizer.ggml.merges"] == ref.fields["tokenizer.ggml.merges"],
              "qwen3: merges (pair form) equal ggml-vocab-qwen2.gguf's")
        for a in tj["added_tokens"]:
            looks = a["content"].startswith("<|") and a["content"].endswith("|>")
            want = 3 if a["special"] or looks else 4
            check(toks[a["id"]] == a["content"] and types[a["id"]] == want,
                  f"qwen3: added token {a['content']} type {types[a['id']]} != {want}")
        check(toks[151669] == "[PAD151669]" and types[151669] == 5, "qwen3: unused ids")
        check(all(t == 1 for t in types[:151643]), "qwen3: normal tokens")
        check("output.weight" not in g.tensors, "qwen3: tied output is not written")
        q = np.frombuffer(g.tensor_bytes("blk.0.attn_q.weight"), dtype=np.float32)
        check(q.tobytes() == w["model.layers.0.self_attn.q_proj.weight"].tobytes(),
              "qwen3: q is not permuted")
        check(g.tensor_bytes("blk.0.attn_k_norm.weight") ==
              w["model.layers.0.self_attn.k_norm.weight"].tobytes(), "qwen3: k norm")

        # A Llama with attention biases: poot's Llama has none, and convert
        # applies the loader's checks, so it is refused rather than written.
        cfg = {"model_type": "llama", "vocab_size": 32000, "hidden_size": 16,
               "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4,
               "num_key_value_heads": 2, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
               "attention_bias": True}
        folder = os.path.join(tmp, "llama2-bias")
        tiny_model(folder, cfg, "llama2", 1, bias=True)
        out = os.path.join(tmp, "llama2-bias.gguf")
        r = subprocess.run([POOT, "convert", folder, out], capture_output=True, text=True)
        check(r.returncode == 1 and "'attention_bias'" in r.stderr and not os.path.exists(out),
              "llama2: attention_bias refused: rc %d, %r" % (r.returncode, r.stderr))
        # Llama 2's tokenizer.json: a SentencePiece vocabulary.
        cfg["attention_bias"] = False
        folder = os.path.join(tmp, "llama2-tiny")
        w = tiny_model(folder, cfg, "llama2", 1)
        out = os.path.join(tmp, "llama2.gguf")
        run("convert", folder, out)
        g = FastGGUF(out)
        f = g.fields
        tj = json.load(open(os.path.join(hf, "llama2/tokenizer.json")))
        inv = {i: t for t, i in tj["model"]["vocab"].items()}
        for key, want in [("tokenizer.ggml.model", "llama"), ("tokenizer.ggml.bos_token_id", 1),
                          ("tokenizer.ggml.eos_token_id", 2),
                          ("tokenizer.ggml.unknown_token_id", 0),
                          ("tokenizer.ggml.add_bos_token", True),
                          ("tokenizer.ggml.add_eos_token", False)]:
            check(f.get(key) == want, f"llama2: {key} = {f.get(key)} != {want}")
        check("tokenizer.ggml.pre" not in f and "tokenizer.ggml.merges" not in f,
              "llama2: no pre-tokenizer or merges for a SentencePiece vocabulary")
        check(f["tokenizer.ggml.tokens"] == [inv[i] for i in range(32000)], "llama2: tokens")
        types, scores = f["tokenizer.ggml.token_type"], f["tokenizer.ggml.scores"]
        check(types[:3] == [2, 3, 3], f"llama2: special types {types[:3]}")
        check(types[3:259] == [6] * 256, "llama2: bytes")
        check(all(t == 1 for t in types[259:]), "llama2: normal tokens")
        # Scores reproduce the merge order: a token made by merge rank r
        # scores -r (its first merge), a token no merge makes -(merges + id).
        merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m)
                  for m in tj["model"]["merges"]]
        want = [-float(len(merges) + i) for i in range(32000)]
        seen = set()
        for r, (a, b) in enumerate(merges):
            t = tj["model"]["vocab"][a + b]
            if t not in seen:
                seen.add(t)
                want[t] = -float(r)
        check(scores == want, "llama2: scores follow the merge ranks")
        check(scores[259] == -58876.0 and scores[261] == 0.0,
              "llama2: '\u2581\u2581' merges last, '\u2581t' first")
        # The converted vocabulary tokenizes like the tokenizers package.
        try:
            from tokenizers import Tokenizer
        except ImportError:
            Tokenizer = None
        if Tokenizer is None:
            print("note: tokenizers is absent; the converted vocabulary's ids are not compared")
        else:
            hft = Tokenizer.from_file(os.path.join(hf, "llama2/tokenizer.json"))
            texts = ["    return", "def f(x):\n    return x", "Hello world", " leading",
                     "a  b   c    d     e", "\t\ttabs\n\n", "naïve café Straße 日本語 🦙",
                     "1234567890 3.14159", "<s> not special </s>", "x" * 40,
                     "if x:\n        y = 1\n            z = 2", "Once upon a time",
                     "The capital of France is", "\u0300\u0301 combining", "e-mail: a@b.c"]
            for t in texts:
                ids = [int(x) for x in run_input(t, "tokenize", "-m", out, "--no-bos").split()]
                hft.encode_special_tokens = True
                want_ids = hft.encode(t, add_special_tokens=False).ids
                check(ids == want_ids, f"llama2: tokenize {t!r}: {ids} != tokenizers {want_ids}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


# ---------------------------------------------------------------- gguf → gguf

def test_gguf(*_):
    """GGUF in: metadata preserved, tensors kept byte for byte without --type,
    re-typed exactly (gguf's dequantize / quantize) with it."""
    vdir = os.path.join(DATA, "vocab")
    model = os.path.join(DATA, "models/stories260K/stories260K.bin")
    tok = os.path.join(DATA, "models/stories260K/tok512.bin")
    if not (os.path.isdir(vdir) and os.path.exists(model)):
        print("SKIP: test data is absent")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="poot-gguf-")
    try:
        out = os.path.join(tmp, "out.gguf")
        # Every vocabulary file comes back byte for byte.
        for name in sorted(f for f in os.listdir(vdir) if f.endswith(".gguf")):
            run("convert", os.path.join(vdir, name), out)
            check(open(out, "rb").read() == open(os.path.join(vdir, name), "rb").read(),
                  f"{name}: convert without --type is the identity")
        base = os.path.join(tmp, "stories-f32.gguf")
        run("convert", model, base, "--tokenizer", tok, "--type", "f32")
        run("convert", base, out)
        check(open(out, "rb").read() == open(base, "rb").read(), "stories f32: identity")
        src = FastGGUF(base)
        for tname in ["q8_0", "q4_0", "q5_1", "bf16"]:
            # f32 GGUF → type: as the safetensors path quantizes.
            qpath = os.path.join(tmp, f"stories-{tname}.gguf")
            run("convert", base, qpath, "--type", tname)
            q = FastGGUF(qpath)
            label = f"gguf f32→{tname}"
            for key, value in src.fields.items():
                want = FILE_TYPE[tname] if key == "general.file_type" else value
                check(q.fields.get(key) == want, f"{label}: metadata {key} preserved")
            check(list(q.tensors) == list(src.tensors), f"{label}: tensor order")
            for name, (ttype, ne, _) in src.tensors.items():
                a = np.frombuffer(src.tensor_bytes(name), dtype=np.float32).reshape(
                    list(reversed(ne)))
                compare_tensor(q, name, a, TYPES[tname], label)
            # type → f32: gguf's dequantization.
            back = os.path.join(tmp, f"stories-{tname}-f32.gguf")
            run("convert", qpath, back, "--type", "f32")
            b = FastGGUF(back)
            label = f"gguf {tname}→f32"
            check(b.fields["general.file_type"] == 0, f"{label}: file type")
            for name, (ttype, ne, _) in q.tensors.items():
                raw = np.frombuffer(q.tensor_bytes(name), dtype=np.uint8)
                if ttype == Q.F32:
                    want = raw.tobytes()
                else:
                    rows = int(np.prod(ne[1:]))
                    want = quants.dequantize(raw.reshape(rows, -1), ttype).astype(
                        np.float32).tobytes()
                check(b.tensors[name][0] == Q.F32, f"{label}: {name} is f32")
                check(b.tensor_bytes(name) == want, f"{label}: {name} dequantized exactly")
        r = gguf.GGUFReader(back)  # and the gguf package reads the result
        check(len(r.tensors) == len(src.tensors), "GGUFReader reads a re-typed file")
        # The k-quant mixtures: poot's q4_k/q5_k/q6_k blocks decode in the gguf
        # package exactly as poot decodes them (the demo model: rows of 256, 512).
        demo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../models/poot-demo.gguf")
        for mix in ["q4_k_m", "q5_k_m"]:
            kpath = os.path.join(tmp, f"demo-{mix}.gguf")
            run("convert", demo, kpath, "--type", mix)
            back = os.path.join(tmp, f"demo-{mix}-f32.gguf")
            run("convert", kpath, back, "--type", "f32")
            k, b = FastGGUF(kpath), FastGGUF(back)
            kinds = set()
            for name, (ttype, ne, _) in k.tensors.items():
                if ttype == Q.F32:
                    continue
                kinds.add(ttype.name)
                raw = np.frombuffer(k.tensor_bytes(name), dtype=np.uint8)
                rows = int(np.prod(ne[1:]))
                want = quants.dequantize(raw.reshape(rows, -1), ttype).astype(np.float32).tobytes()
                check(b.tensor_bytes(name) == want, f"demo {mix}: {name} decodes as in gguf")
            check(kinds == {"Q4_K" if mix == "q4_k_m" else "Q5_K", "Q6_K"},
                  f"demo {mix}: its types are {sorted(kinds)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


# ------------------------------------------------------------------------ cli

def test_cli(*_):
    """Exit codes and messages of `poot convert` and `poot inspect`."""
    def code(*args):
        r = subprocess.run([POOT, *args], capture_output=True)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")

    for cmd in ("convert", "inspect"):
        rc, out, _ = code(cmd, "--help")
        check(rc == 0 and "usage: poot " + cmd in out, f"{cmd} --help")
        rc, _, err = code(cmd, "--bogus")
        check(rc == 2 and "unknown flag" in err, f"{cmd} --bogus exits 2")
        rc, _, err = code(cmd)
        check(rc == 2, f"{cmd} without arguments exits 2")
    rc, _, err = code("convert", "a", "b", "--type", "q9_9")
    check(rc == 2 and "--type" in err, "convert --type q9_9 exits 2")
    rc, _, err = code("convert", "a", "b", "--type", "q2_k")
    check(rc == 2 and "q4_k_m" in err, "convert --type q2_k (read, not written) exits 2 naming q4_k_m")
    tmp = tempfile.mkdtemp(prefix="poot-cli-")
    try:
        missing = os.path.join(tmp, "missing.gguf")
        rc, _, err = code("inspect", missing)
        check(rc == 1 and err.startswith("poot inspect:") and err.count("\n") == 1,
              f"inspect of a missing file: one line, exit 1 ({rc}: {err!r})")
        junk = os.path.join(tmp, "junk.bin")
        open(junk, "wb").write(b"GGUF\x03\x00\x00\x00" + b"\xff" * 16)
        rc, _, err = code("inspect", junk)
        check(rc == 1 and "offset" in err, f"inspect of a malformed GGUF names the offset: {err!r}")
        model = os.path.join(DATA, "models/stories260K/stories260K.bin")
        if os.path.exists(model):
            rc, _, err = code("convert", model, os.path.join(tmp, "x.gguf"))
            check(rc == 1 and "--tokenizer" in err, f"llama2.c without --tokenizer: {err!r}")
            check(not os.path.exists(os.path.join(tmp, "x.gguf")), "no partial output")
            rc, out, _ = code("inspect", model)
            check(rc == 0 and "llama2.c" in out and "shared_classifier" in out,
                  "inspect of a llama2.c checkpoint")
            info = json.loads(code("inspect", model, "--json")[1])
            check(info["config"]["dim"] == 64 and info["config"]["n_kv_heads"] == 4 and
                  info["config"]["shared_classifier"] is True and len(info["tensors"]) == 47,
                  "inspect --json of stories260K")
            # inspect of a GGUF with tensors: the gguf package's view, dims reversed.
            tok = os.path.join(DATA, "models/stories260K/tok512.bin")
            out = os.path.join(tmp, "s.gguf")
            run("convert", model, out, "--tokenizer", tok, "--type", "q8_0")
            info = json.loads(code("inspect", out, "--json")[1])
            r = gguf.GGUFReader(out)
            want = [{"name": t.name, "type": t.tensor_type.name.lower(),
                     "shape": [int(x) for x in reversed(t.shape)], "bytes": int(t.n_bytes)}
                    for t in r.tensors]
            check(info["tensors"] == want, "inspect --json tensors of a GGUF")
            check(info["architecture"] == "llama" and info["tokenizer"]["tokens"] == 512,
                  "inspect --json architecture and tokenizer")
            rc, text, _ = code("inspect", out)
            check(rc == 0 and "blk.4.ffn_down.weight" in text and "q8_0" in text,
                  "inspect text lists tensors")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main():
    if not POOT or not os.path.exists(POOT):
        print("SKIP: POOT is not set")
        return SKIP
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    tests = {"llama2c": test_llama2c, "safetensors": test_safetensors, "vocab": test_vocab,
             "gguf": test_gguf, "tokenizers": test_tokenizers, "cli": test_cli}
    if what not in tests:
        print(f"usage: {sys.argv[0]} {'|'.join(tests)}")
        return 2
    rc = tests[what](*sys.argv[2:3])
    if rc == SKIP:
        return SKIP
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
