#!/usr/bin/env python3
"""Embedding throughput and latency of Hugging Face on the encoder folder poot
benchmarks with `poot embed --bench` (the peer of DESIGN §10).

    hf_embed.py MODEL_DIR [--batch 64] [--tokens 128] [--dtype float16]

The same work as poot's bench: sentences of exactly TOKENS ids ([CLS], word
pieces, [SEP]) in batches of BATCH, then one sentence at a time, each timed
for about two seconds after a warm-up, on CUDA in f16 (TF32 off for f32).
Runs sentence-transformers' model when the package is importable (its
forward: the Transformer, Pooling and Normalize modules), else transformers'
AutoModel with the mean pooling and normalization done by hand. Prints one
JSON object: sentences per second, latency in ms, the path, the versions.
Needs torch with CUDA and transformers (the GPU machine, never CI).
"""
import argparse
import json
import time

import torch
import transformers


def timed(fn, min_s):
    fn()
    torch.cuda.synchronize()
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        if n >= 3 and dt >= min_s:
            return dt / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dtype = getattr(torch, a.dtype)
    T = a.tokens
    ids = [101] + [2000 + (t * 37) % 5000 for t in range(1, T - 1)] + [102]
    path = "transformers"
    try:
        from sentence_transformers import SentenceTransformer
        st = SentenceTransformer(a.model, device="cuda")
        st = st.to(dtype)
        path = "sentence-transformers"

        def run(b):
            feats = {"input_ids": torch.tensor([ids] * b, device="cuda"),
                     "attention_mask": torch.ones(b, T, dtype=torch.long, device="cuda"),
                     "token_type_ids": torch.zeros(b, T, dtype=torch.long, device="cuda")}
            with torch.inference_mode():
                return st(feats)["sentence_embedding"]
    except ImportError:
        model = transformers.AutoModel.from_pretrained(a.model, dtype=dtype).to("cuda").eval()

        def run(b):
            x = torch.tensor([ids] * b, device="cuda")
            m = torch.ones(b, T, dtype=torch.long, device="cuda")
            with torch.inference_mode():
                h = model(input_ids=x, attention_mask=m).last_hidden_state
                v = (h * m[..., None]).sum(1) / m.sum(1, keepdim=True)
                return torch.nn.functional.normalize(v, dim=1)
    step = timed(lambda: run(a.batch), 2.0)
    lat = timed(lambda: run(1), 1.0)
    print(json.dumps({"mode": "embed", "peer": path, "dtype": a.dtype, "batch": a.batch, "tokens": T,
                      "sentences_per_s": round(a.batch / step, 2), "latency_ms": round(lat * 1e3, 4),
                      "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "transformers": transformers.__version__}))


if __name__ == "__main__":
    main()
