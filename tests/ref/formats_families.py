#!/usr/bin/env python3
"""`poot convert` of every family against llama.cpp's conventions.

The reference models of scripts/reference/make_models.py (Mistral with its
window, Gemma 2, Gemma 3, Phi-3 with longrope short and long, Llama 3 with
llama3 rope scaling) are converted to f32 GGUF and compared with:
  - the same models written with gguf-py the way llama.cpp's converter
    writes them (tests/unit/llm/verify_gguf_families.py: tensor names,
    Gemma's +1 on norms, Llama's Q/K permutation, Phi-3's rope factor
    tensors, the metadata keys): the same tensors byte for byte and the same
    value for every key that writer sets;
  - Llama 3: rope_freqs.weight equals llama.cpp's LlamaModel formula,
    computed here with numpy.
Exit 0 pass, 1 failure, 77 skipped (numpy, gguf, poot or data absent).
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("POOT_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "unit", "llm"))

try:
    import numpy as np
    import gguf  # noqa: F401
    from formats_convert import FastGGUF
    from verify_gguf_families import write_gguf
except ImportError as e:  # pragma: no cover
    print("SKIP: %s" % e)
    sys.exit(77)

POOT = os.environ.get("POOT")
DATA = os.environ.get("POOT_DATA_DIR", "")
MODELS = ["mistral", "gemma2", "gemma3", "phi3", "phi3-long"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return np.float32(a) == np.float32(b)
    return a == b


def llama3_freqs(cfg):
    rs = cfg["rope_scaling"]
    dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    base = np.float32(cfg["rope_theta"])
    freqs = np.float32(1.0) / (base ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)))
    factor, lo, hi = rs["factor"], rs.get("low_freq_factor", 1.0), rs.get("high_freq_factor", 4.0)
    old = rs.get("original_max_position_embeddings", 8192)
    out = []
    for f in freqs:
        wl = 2 * math.pi / float(f)
        if wl < old / hi:
            out.append(1.0)
        elif wl > old / lo:
            out.append(factor)
        else:
            smooth = (old / wl - lo) / (hi - lo)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def main():
    if not POOT or not os.path.exists(POOT):
        print("SKIP: the poot binary is not built")
        return 77
    maker = os.path.join(SRC, "scripts", "reference", "make_models.py")
    if not os.path.exists(maker) or not os.path.isdir(os.path.join(DATA, "hf-tokenizers")):
        print("SKIP: make_models.py or the test data is absent")
        return 77
    tmp = tempfile.mkdtemp(prefix="poot-conv-fam-")
    try:
        r = subprocess.run([sys.executable, maker, tmp, "--data", DATA, "--only"] + MODELS +
                           ["llama3"], capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: make_models.py: " + r.stderr.strip())
            return 1
        for m in MODELS:
            folder = os.path.join(tmp, m)
            ref_path, out = os.path.join(tmp, m + ".ref.gguf"), os.path.join(tmp, m + ".gguf")
            write_gguf(folder, ref_path)
            r = subprocess.run([POOT, "convert", folder, out, "--type", "f32"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                check(False, "%s: poot convert: %s" % (m, r.stderr.strip()))
                continue
            ref, got = FastGGUF(ref_path), FastGGUF(out)
            cfg = json.load(open(os.path.join(folder, "config.json")))
            for key, want in ref.fields.items():
                if key.startswith("general.") or key.startswith("tokenizer."):
                    continue
                # llama.cpp writes Phi-3's key/value length only implicitly
                # (hidden / heads); the test writer states it always.
                if (key.endswith((".attention.key_length", ".attention.value_length"))
                        and "head_dim" not in cfg and key not in got.fields and
                        want == cfg["hidden_size"] // cfg["num_attention_heads"]):
                    continue
                check(key in got.fields and same(got.fields[key], want),
                      "%s: %s = %r, llama.cpp's writer %r" % (m, key, got.fields.get(key), want))
            check(sorted(got.tensors) == sorted(ref.tensors),
                  "%s: tensor names %s != %s" % (m, sorted(set(got.tensors) ^ set(ref.tensors)),
                                                 []))
            for name in ref.tensors:
                if name not in got.tensors:
                    continue
                check(got.tensors[name][:2] == ref.tensors[name][:2],
                      "%s: %s type/shape %s != %s" % (m, name, got.tensors[name][:2],
                                                      ref.tensors[name][:2]))
                check(got.tensor_bytes(name) == ref.tensor_bytes(name),
                      "%s: %s data differs" % (m, name))
            print("%s: %d tensors, %d keys compared" % (m, len(ref.tensors), len(ref.fields)))
        # Llama 3: llama3 rope scaling as llama.cpp's rope_freqs tensor.
        folder = os.path.join(tmp, "llama3")
        cfg = json.load(open(os.path.join(folder, "config.json")))
        out = os.path.join(tmp, "llama3.gguf")
        r = subprocess.run([POOT, "convert", folder, out, "--type", "f32"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            check(False, "llama3: poot convert: %s" % r.stderr.strip())
        else:
            g = FastGGUF(out)
            want = llama3_freqs(cfg)
            check("rope_freqs.weight" in g.tensors and g.tensors["rope_freqs.weight"][1] ==
                  [len(want)], "llama3: rope_freqs.weight is 1-D of head_dim / 2")
            got = np.frombuffer(g.tensor_bytes("rope_freqs.weight"), dtype=np.float32)
            check(np.array_equal(got, want), "llama3: rope_freqs %s != %s" % (got, want))
            check("llama.rope.scaling.type" not in g.fields, "llama3: no rope.scaling.type")
            check(g.fields.get("tokenizer.ggml.eot_token_id") == 128009,
                  "llama3: config.json's second end id is the EOT")
            print("llama3: rope_freqs %s" % got)
        # What convert cannot carry over is a one-line error, and no file.
        for m, edit, needle in [
                ("llama3", lambda c: c["rope_scaling"].update(rope_type="wavy"), "'wavy'"),
                ("phi3", lambda c: c["rope_scaling"].update(long_factor=[1.0]), "long_factor"),
                ("phi3", lambda c: c.update(model_type="mamba"), "'mamba'")]:
            folder = os.path.join(tmp, m)
            path = os.path.join(folder, "config.json")
            cfg = json.load(open(path))
            edit(cfg)
            json.dump(cfg, open(path, "w"))
            out = os.path.join(tmp, "bad.gguf")
            r = subprocess.run([POOT, "convert", folder, out], capture_output=True, text=True)
            check(r.returncode == 1 and needle in r.stderr and r.stderr.count("\n") == 1 and
                  not os.path.exists(out), "%s: bad config: rc %d, %r" % (m, r.returncode, r.stderr))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
