#!/usr/bin/env python3
"""Greedy reference vectors from Hugging Face transformers.

Usage:
    hf_greedy.py MODELDIR ... --out tests/data/reference [--steps 16] [--device cpu|cuda]

MODELDIR is a folder written by scripts/reference/make_models.py (config.json,
model.safetensors, tokenizer files and cases.json).  Each model is loaded with
transformers in f32 with eager attention; for every case of cases.json the script
records the prompt ids (BOS as the tokenizer adds it; chat cases go through the
tokenizer's chat template with add_generation_prompt=True), `--steps` greedy ids,
the top1 - top2 logit margin at every step, and the f32 logits of the first two
generated steps.  Every step runs the whole sequence again without a KV cache.
Greedy decoding does not stop at EOS.

Writes OUT/<name>.json and, for f32 weights, OUT/<name>.logits.npy
(f32 [cases, 2, vocab]).  Needs torch and transformers.
"""

import argparse
import json
import os
import sys

import numpy as np


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def sha256(path):
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run_model(d, args, torch, transformers):
    from tokenizers import Tokenizer

    meta = load(os.path.join(d, "cases.json"))
    config = load(os.path.join(d, "config.json"))
    device = args.device
    model, info = transformers.AutoModelForCausalLM.from_pretrained(
        d, dtype=torch.float32, attn_implementation="eager", output_loading_info=True)
    missing = set(info.get("missing_keys", []))
    if config.get("tie_word_embeddings"):
        missing.discard("lm_head.weight")  # a tied model's file has no lm_head
    bad = {"missing": sorted(missing), "unexpected": sorted(info.get("unexpected_keys", [])),
           "mismatched": list(info.get("mismatched_keys", []))}
    bad = {k: v for k, v in bad.items() if v}
    if bad:
        raise SystemExit(f"{meta['name']}: loading problems: {bad}")
    if type(model).__name__ != config["architectures"][0]:
        raise SystemExit(f"{meta['name']}: loaded {type(model).__name__}, expected {config['architectures'][0]}")
    model = model.to(device).eval()
    tok = transformers.AutoTokenizer.from_pretrained(d)
    raw = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))

    cases, logits_out = [], []
    for case in meta["cases"]:
        if case["chat"]:
            text = tok.apply_chat_template(case["messages"], tokenize=False, add_generation_prompt=True)
            ids = list(tok(text, add_special_tokens=False)["input_ids"])
            raw_ids = raw.encode(text, add_special_tokens=False).ids
        else:
            text = case["prompt"]
            ids = list(tok(text)["input_ids"])
            raw_ids = raw.encode(text, add_special_tokens=True).ids
        if ids != raw_ids:
            print(f"WARNING {meta['name']}: transformers ids differ from tokenizer.json ids for {text!r}:\n"
                  f"  {ids}\n  {raw_ids}", file=sys.stderr)
        seq = list(ids)
        greedy, margins, first = [], [], []
        with torch.no_grad():
            for step in range(args.steps):
                x = torch.tensor([seq], dtype=torch.long, device=device)
                out = model(input_ids=x, use_cache=False)
                row = out.logits[0, -1].to(torch.float32)
                top = torch.topk(row, 2)
                nxt = int(torch.argmax(row))
                margins.append(float(top.values[0] - top.values[1]))
                if step < 2:
                    first.append(row.cpu().numpy().astype(np.float32))
                greedy.append(nxt)
                seq.append(nxt)
        c = {"prompt": text, "chat": case["chat"]}
        if case["chat"]:
            c["messages"] = case["messages"]
        c.update({"prompt_ids": ids, "greedy_ids": greedy, "margins": margins, "weights": meta["weights"]})
        c["text"] = tok.decode(greedy)
        cases.append(c)
        logits_out.append(np.stack(first))
        print(f"{meta['name']}: {text[:40]!r}: {len(ids)} prompt ids, min margin {min(margins):.3f}, "
              f"out {c['text'][:60]!r}")

    doc = {
        "name": meta["name"],
        "family": meta["family"],
        "config": config,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0) if device.startswith("cuda") else "cpu",
        "steps": args.steps,
        # make_models.py must give this exact file again for the vectors to apply
        "model_sha256": sha256(os.path.join(d, "model.safetensors")),
        "cases": cases,
    }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, meta["name"] + ".json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    if meta["weights"] == "f32":
        np.save(os.path.join(args.out, meta["name"] + ".logits.npy"), np.stack(logits_out).astype(np.float32))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", metavar="MODELDIR")
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--device", default=None)
    args = ap.parse_args(argv)
    try:
        import torch
        import transformers
    except ImportError as e:
        print(f"SKIP: hf_greedy needs torch and transformers ({e})")
        return 77
    # Plain IEEE f32 matrix products everywhere (no TF32).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    failed = []
    for d in args.models:
        try:
            run_model(d.rstrip("/"), args, torch, transformers)
        except Exception as e:  # report and go on with the other models
            import traceback
            traceback.print_exc()
            failed.append(f"{d}: {type(e).__name__}: {e}")
    for f in failed:
        print("FAILED", f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
