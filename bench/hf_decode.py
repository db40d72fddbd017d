#!/usr/bin/env python3
"""Decode and prefill speed of Hugging Face transformers on the same model
folder poot benchmarks (the peer of DESIGN §10), greedy, batch 1.

    hf_decode.py MODEL_DIR [-p 512] [-n 64] [--dtype float16] [--cache dynamic|static]

Prints one JSON object: prefill tokens per second at P tokens (one forward
pass), decode tokens per second over N greedy steps after that prefill (the
time of generate(P → P+N) minus the prefill, per new token), the device, and
the versions. Needs torch with CUDA and transformers (run on the GPU machine,
never in CI).
"""
import argparse
import json
import time

import torch
import transformers
from transformers import AutoModelForCausalLM


def sync():
    torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("-p", type=int, default=512)
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16"])
    ap.add_argument("--cache", default="dynamic", choices=["dynamic", "static"])
    a = ap.parse_args()
    dtype = getattr(torch, a.dtype)
    t0 = time.time()
    model = AutoModelForCausalLM.from_pretrained(a.model, dtype=dtype).to("cuda").eval()
    load_s = time.time() - t0
    vocab = model.config.vocab_size
    ids = torch.tensor([[(i * 7919 + 31) % (vocab - 8) + 8 for i in range(a.p)]], device="cuda")
    kw = dict(do_sample=False, pad_token_id=0, eos_token_id=None)
    if a.cache == "static":
        kw["cache_implementation"] = "static"

    def gen(n):
        sync()
        t = time.time()
        with torch.inference_mode():
            out = model.generate(ids, max_new_tokens=n, min_new_tokens=n, **kw)
        sync()
        assert out.shape[1] == a.p + n
        return time.time() - t

    gen(2)  # warm-up
    gen(a.n)
    prefill = min(gen(1) for _ in range(3))
    full = min(gen(a.n) for _ in range(2))
    decode_tps = (a.n - 1) / (full - prefill) if full > prefill else 0.0
    print(json.dumps({
        "peer": "transformers", "model": a.model, "dtype": a.dtype, "cache": a.cache,
        "prefill_tokens": a.p, "decode_steps": a.n, "load_s": round(load_s, 2),
        "prefill_tok_s": round(a.p / prefill, 1), "decode_tok_s": round(decode_tps, 1),
        "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "transformers": transformers.__version__}))


if __name__ == "__main__":
    main()
