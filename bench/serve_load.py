#!/usr/bin/env python3
"""A bounded loopback load test of `poot serve` (docs/serve.md).

Starts `poot serve --port 0` on MODEL, then runs ROUNDS rounds of N concurrent streamed
completions (each with its own prompt and max_tokens), and stops by itself. Checks that no
request is lost or duplicated (every stream ends with [DONE], every response id is new, each
round's answers are the ones asked for: usage.completion_tokens equals the streamed tokens),
and reports per round: p50/p99 time to first token, p50/p99 inter-token latency, tokens per
second over the round, and the server's resident memory (VmRSS) after it.

    python3 bench/serve_load.py --poot build/tools/poot -m models/poot-demo.gguf -n 4 --rounds 3

Standard library only (urllib and threads), so it runs wherever the server does."""
import argparse
import json
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request


def pct(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


WORDS = ("the", "little", "robot", "walked", "through", "a", "quiet", "garden", "and", "found",
         "seven", "shining", "stones", "under", "an", "old", "tree", "near", "river")


def prompt_of(i, words):
    """Request i's prompt: its own opening (no prefix shared with the others), then
    `words` words of a fixed filler, so a prompt's length can be set."""
    filler = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(words))
    return f"Story {i}. Once upon a time, {filler}".rstrip() + ":"


def one_stream(base, i, max_tokens, out, k, words=0):
    """Stream request i (its prompt and seed) into out[k]."""
    body = json.dumps({"prompt": prompt_of(i, words), "max_tokens": max_tokens,
                       "temperature": 0.8, "seed": i, "stream": True,
                       "stream_options": {"include_usage": True}}).encode()
    req = urllib.request.Request(base + "/v1/completions", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    times, ids, usage, done = [], set(), None, False
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            for raw in r:
                line = raw.decode().strip()
                if not line.startswith("data: "):
                    continue
                data = line[6:]
                if data == "[DONE]":
                    done = True
                    break
                chunk = json.loads(data)
                if "error" in chunk:
                    out[k] = {"error": chunk["error"]["message"]}
                    return
                ids.add(chunk["id"])
                if chunk.get("usage"):
                    usage = chunk["usage"]
                if chunk["choices"] and chunk["choices"][0]["text"]:
                    times.append(time.perf_counter())
    except Exception as err:  # a lost request is reported, never hidden
        out[k] = {"error": repr(err)}
        return
    out[k] = {"t0": t0, "times": times, "ids": ids, "usage": usage, "done": done,
              "end": time.perf_counter()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--poot", default="build/tools/poot")
    ap.add_argument("-m", "--model", default="models/poot-demo.gguf")
    ap.add_argument("--device", default="auto")
    ap.add_argument("-n", "--streams", type=int, default=4, help="concurrent streams a round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--max-seqs", type=int, default=1,
                    help="poot serve --max-seqs: sequences decoding together (batched engine past 1)")
    ap.add_argument("--prompt-words", type=int, default=0,
                    help="filler words after each prompt's own opening (about a token each)")
    a = ap.parse_args()
    srv = subprocess.Popen([a.poot, "serve", "-m", a.model, "--device", a.device, "--port", "0",
                            "--ctx", str(a.ctx), "--max-queue", str(a.streams),
                            "--max-seqs", str(a.max_seqs), "-q"],
                           stdout=subprocess.PIPE, text=True)
    try:
        m = re.search(r"http://([\d.]+:\d+)", srv.stdout.readline())
        if not m:
            print("the server did not start")
            return 1
        base = "http://" + m.group(1)
        print(f"server {base} pid {srv.pid}, RSS {rss_kib(srv.pid) / 1024:.1f} MiB before load")
        print("round  ok/asked  ttft p50/p99 ms  itl p50/p99 ms  tok/s  RSS MiB")
        seen, failures = set(), 0
        for rnd in range(a.rounds):
            out = [None] * a.streams
            threads = [threading.Thread(target=one_stream,
                                        args=(base, rnd * a.streams + k, a.max_tokens, out, k,
                                              a.prompt_words))
                       for k in range(a.streams)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - t0
            ttft, itl, tokens, ok = [], [], 0, 0
            for k, r in enumerate(out):
                if r is None or "error" in r:
                    failures += 1
                    print(f"  stream {k}: lost: {r and r['error']}")
                    continue
                new = r["ids"] - seen
                if not r["done"] or len(r["ids"]) != 1 or not new:
                    failures += 1
                    print(f"  stream {k}: incomplete or duplicated (ids {r['ids']})")
                    continue
                seen |= r["ids"]
                if r["usage"] is None or r["usage"]["completion_tokens"] < len(r["times"]):
                    failures += 1
                    print(f"  stream {k}: usage {r['usage']} against {len(r['times'])} chunks")
                    continue
                ok += 1
                tokens += r["usage"]["completion_tokens"]
                if r["times"]:
                    ttft.append(r["times"][0] - r["t0"])
                    itl += [b - a_ for a_, b in zip(r["times"], r["times"][1:])]
            print(f"{rnd:5d}  {ok:2d}/{a.streams:<5d}  {pct(ttft, .5) * 1e3:6.0f}/"
                  f"{pct(ttft, .99) * 1e3:<6.0f}  {pct(itl, .5) * 1e3:6.1f}/{pct(itl, .99) * 1e3:<6.1f}"
                  f"  {tokens / wall:5.1f}  {rss_kib(srv.pid) / 1024:7.1f}")
        print("PASS" if failures == 0 else f"FAIL: {failures} requests lost or wrong")
        return 0 if failures == 0 else 1
    finally:
        srv.send_signal(2)
        try:
            srv.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()


if __name__ == "__main__":
    sys.exit(main())
